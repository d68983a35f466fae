/**
 * Test fixtures for Tenure, one copy each, used by users' tests and by every test module of Tenure
 * itself (the server's member tests, which live in this module's tests under their own packages;
 * the CLI's; tenure-it's process-level tests; the bench's member processes):
 *
 * <ul>
 *   <li>{@link io.tenure.testing.TenureCluster} and {@link io.tenure.testing.TenureExtension}: real
 *       members in the test's own JVM on 127.0.0.1 (one, or a cluster; settings changed by a
 *       {@code ServerConfig} tweak; stop, restart on the same data, a joining member; raw gRPC stubs
 *       and the {@code TenureServer} of each member).</li>
 *   <li>{@link io.tenure.testing.MemberProcess}: a real {@code tenure server} in a child JVM with this
 *       JVM's class path ({@link io.tenure.testing.ChildJava}): launch, wait until it serves, SIGTERM,
 *       kill -9, SIGSTOP/SIGCONT, a command wrapper such as {@code ip netns exec}.</li>
 *   <li>{@link io.tenure.testing.FreePorts}: distinct free loopback ports, all held open while choosing.</li>
 *   <li>{@link io.tenure.testing.Await}: waiting for a condition with a deadline, never a fixed sleep.</li>
 * </ul>
 *
 * <p>The fake clock lives with the core, in its test-jar, so that the module graph stays acyclic.
 */
package io.tenure.testing;
