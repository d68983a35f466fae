/**
 * Tenure for Spring: {@link io.tenure.spring.TenureLockRegistry}, Spring Integration's lock
 * registry over Tenure locks whose {@link io.tenure.spring.RegistryLock}s carry the fencing
 * token, and {@link io.tenure.spring.TenureAutoConfiguration}, which makes a client and a registry
 * from the {@code tenure.*} properties of a Spring Boot application.
 */
package io.tenure.spring;
