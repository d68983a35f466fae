package io.tenure.it.safety;

/**
 * How one check came out.
 *
 * @param check    1 to 10
 * @param title    its name
 * @param status   passed, violated, or not exercised (the run's data could not decide it)
 * @param evidence what was examined, and what could not be decided and why
 */
public record CheckOutcome(int check, String title, Status status, String evidence) {
    public enum Status { PASSED, VIOLATED, NOT_EXERCISED }
}
