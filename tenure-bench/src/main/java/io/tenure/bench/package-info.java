/**
 * Benchmarks of Tenure: {@code tenure bench} (workloads W1-W7 against real member processes
 * through the Java SDK) and JMH benchmarks of the core and the apply path ({@code jmh}).
 *
 * <h2>Result format (shared with the peer drivers)</h2>
 * Every workload run prints exactly one JSON line on stdout (progress goes to stderr), keys in
 * this order:
 * <pre>
 * {"target": "tenure-1"|"tenure-3"|"etcd"|"zookeeper"|"redis", "workload": "W1".."W7",
 *  "clients": N, "seconds": S, "ops": N, "ops_per_sec": X,
 *  "p50_ms": X, "p99_ms": X, "max_ms": X, "overlaps": 0, "extra": {...}}
 * </pre>
 * <ul>
 * <li>{@code seconds}: the measured window, warm-up excluded; {@code ops_per_sec = ops / seconds}.
 * <li>{@code overlaps}: how often a client entered a key's critical section while another was
 *     inside (W6: while {@code limit} others were inside; W7: a reader beside a writer, a
 *     writer beside anyone), from an in-process counter of holders per key; any value above 0
 *     fails the run (exit 1).
 * <li>Latencies are in milliseconds, three decimals, from an HdrHistogram of microseconds.
 * </ul>
 * What an operation and the latency are, and what {@code extra} holds, per workload:
 * <ul>
 * <li>W1 uncontended: one op = acquire + release of the client's own key; latency = that cycle.
 *     extra: {@code leases} (one per client), {@code sdk_clients} (shared SDK instances).
 * <li>W2 contended: one op = one acquisition (a hand-off) of the single key; latency = the
 *     acquire wait. extra: {@code acquisitions} (per client, in client order), {@code wait_p50_ms},
 *     {@code wait_p99_ms}, {@code fairness_min_over_max}.
 * <li>W3 leases: {@code clients} = leases; one op = one observed keep-alive acknowledgement;
 *     latency = keep-alive round trip (see {@code keepalive_latency} in extra for how it was
 *     observed). extra: {@code leases}, {@code ttl_ms}, {@code keepalives_per_sec} (observed),
 *     {@code keepalives_per_sec_expected} (N × 3 / TTL), {@code keepalive_p99_ms}, {@code lost}
 *     (must be 0), {@code server_heap_bytes_per_lease}, {@code heap_method}.
 * <li>W4 watches: W1 runs while watchers watch its prefix; ops and latency are W1's cycles.
 *     extra: {@code watchers}, {@code events_delivered}, {@code events_per_sec},
 *     {@code delivery_p50_ms}, {@code delivery_p99_ms}, {@code delivery_max_ms} (event arrival
 *     minus the time the writer's acquire completed for the same revision; 0 when the event came first).
 * <li>W5 failover: one op = one kill -9 of the leader; latency = time from the kill to the next
 *     successful acquisition through a surviving member. extra: {@code failover_ms} (list),
 *     {@code median_ms}, {@code worst_ms}.
 * <li>W6 semaphore: every client takes one permit of a single semaphore (limit {@code --limit},
 *     default 8), holds it for no time and gives it back; one op = one grant; latency = the
 *     acquire wait. extra: W2's ({@code acquisitions}, {@code wait_p50_ms}, {@code wait_p99_ms},
 *     {@code fairness_min_over_max}) and {@code limit}, {@code permits_per_acquire},
 *     {@code holders_peak} (the most holders seen inside at once, never above the limit).
 * <li>W7 read/write lock: every client draws a read with probability 0.9, else a write, from its
 *     own {@code SplittableRandom} (seeded 7 + its index, as the peer drivers seed theirs), takes
 *     that lock of a single read/write lock, holds it for no time and releases it; one op = one
 *     grant, read or write; latency = the acquire wait. extra: W2's and {@code read_share},
 *     {@code seed}, {@code reads}, {@code writes}, {@code read_wait_p50_ms},
 *     {@code read_wait_p99_ms}, {@code write_wait_p50_ms}, {@code write_wait_p99_ms},
 *     {@code write_wait_max_ms}, {@code readers_peak} (the most readers seen inside at once).
 * </ul>
 * {@link io.tenure.bench.ResultTable} reads such lines (files or stdin; other lines are skipped)
 * and prints a markdown table with Tenure-to-peer ratios.
 */
package io.tenure.bench;
