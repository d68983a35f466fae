package io.tenure.core.kernel;

/**
 * One comparison of a {@link Txn} (etcd's {@code Compare}): what the primitive of kind
 * {@code kind} holds under {@code key}, its {@code target}, in {@code relation} to an operand.
 * The operand is {@code number} for a revision, a version or a counter's value, and the bytes
 * {@code value} for a key-value key's value (null otherwise).
 *
 * <p>Something that does not exist has revisions and a version of 0 (a counter that does not
 * exist also reads 0); a key-value comparison of the value of an absent key never holds, whatever
 * the relation (as etcd's).
 *
 * @param kind the primitive's kind name, such as {@code "kv"} or {@code "counter"}
 */
public record TxnCompare(String kind, String key, Target target, Relation relation, long number, byte[] value) {

    /** What is compared. */
    public enum Target {
        VALUE, MOD_REVISION, CREATE_REVISION, VERSION
    }

    /** How the actual target stands to the operand for the comparison to hold. */
    public enum Relation {
        EQUAL, NOT_EQUAL, LESS, GREATER;

        /** Whether the relation holds for {@code order}, the sign of actual compared with the operand. */
        public boolean holds(int order) {
            return switch (this) {
                case EQUAL -> order == 0;
                case NOT_EQUAL -> order != 0;
                case LESS -> order < 0;
                case GREATER -> order > 0;
            };
        }
    }

    /** A comparison of a number: a revision, a version or a counter's value. */
    public static TxnCompare of(String kind, String key, Target target, Relation relation, long number) {
        return new TxnCompare(kind, key, target, relation, number, null);
    }

    /** A comparison of a key-value key's value with {@code value}, byte by byte, unsigned (as etcd's). */
    public static TxnCompare ofValue(String kind, String key, Relation relation, byte[] value) {
        return new TxnCompare(kind, key, Target.VALUE, relation, 0, value);
    }
}
