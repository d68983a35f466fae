package io.tenure.core;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.FileReader;
import java.io.FileWriter;
import java.io.RandomAccessFile;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.UUID;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * tenure-core stays pure (ARCHITECTURE.md, STYLE.md point 1): no Ratis, gRPC, protobuf, network,
 * files, threads, clocks or randomness, so that it is deterministic on every replica (I8) and
 * testable with simulated time. Checked on the compiled main classes, not trusted to memory.
 */
class CorePurityTest {
    private static final String CORE = "io.tenure.core..";

    private static final JavaClasses MAIN_CLASSES = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
            .importPackages("io.tenure.core");

    /** Only the JDK and itself. */
    static final ArchRule ONLY_THE_JDK = classes().that().resideInAPackage(CORE)
            .should().onlyDependOnClassesThat().resideInAnyPackage(CORE, "java..")
            .because("tenure-core depends on the JDK alone");

    static final ArchRule NO_FRAMEWORKS_NO_IO = noClasses().that().resideInAPackage(CORE)
            .should().dependOnClassesThat().resideInAnyPackage(
                    "org.apache.ratis..", "io.grpc..", "com.google.protobuf..",
                    "java.net..", "java.nio.channels..", "java.nio.file..", "java.util.concurrent..", "java.lang.reflect..")
            .orShould().dependOnClassesThat().belongToAnyOf(
                    File.class, FileInputStream.class, FileOutputStream.class, FileReader.class, FileWriter.class, RandomAccessFile.class)
            .because("the core does no I/O and starts no threads; the server hands it streams");

    static final ArchRule NO_CLOCK_NO_RANDOMNESS_NO_THREADS = noClasses().that().resideInAPackage(CORE)
            .should().dependOnClassesThat().belongToAnyOf(
                    Clock.class, Random.class, SecureRandom.class, SplittableRandom.class, Thread.class, ThreadLocal.class)
            .orShould().callMethod(System.class, "currentTimeMillis")
            .orShould().callMethod(System.class, "nanoTime")
            .orShould().callMethod(Math.class, "random")
            .orShould().callMethod(UUID.class, "randomUUID")
            .orShould().callMethod(Instant.class, "now")
            .orShould().callMethod(LocalDateTime.class, "now")
            .orShould().callMethod(LocalDate.class, "now")
            .orShould().callMethod(ZonedDateTime.class, "now")
            .orShould().callMethod(OffsetDateTime.class, "now")
            .because("time and chance enter only through the log, as command fields (I4, I8)");

    /** The kernel names no primitive: adding one touches its own package and the list in TenureState, never the kernel. */
    static final ArchRule KERNEL_KNOWS_NO_PRIMITIVE = classes().that().resideInAPackage("io.tenure.core.kernel..")
            .should().onlyDependOnClassesThat(resideInAnyPackage("io.tenure.core.kernel..", "io.tenure.core.watch..", "java..")
                    .or(belongToAnyOf(Limits.class, SnapshotFormatException.class)))
            .because("the kernel is what every primitive shares; a primitive is added without touching it");

    /** Primitives meet only through the kernel (a lease's end reaches each through its hook). */
    static final ArchRule PRIMITIVES_DO_NOT_IMPORT_EACH_OTHER = slices().matching("io.tenure.core.(*)..")
            .should().notDependOnEachOther()
            .ignoreDependency(DescribedPredicate.alwaysTrue(), resideInAnyPackage("io.tenure.core.kernel..", "io.tenure.core.watch.."))
            .because("each primitive is a package of its own over the kernel");

    @Test
    void theKernelNamesNoPrimitive() {
        KERNEL_KNOWS_NO_PRIMITIVE.check(MAIN_CLASSES);
    }

    @Test
    void primitivesDoNotImportEachOther() {
        PRIMITIVES_DO_NOT_IMPORT_EACH_OTHER.check(MAIN_CLASSES);
    }

    /** The shape rule can fail too: a class of the kernel's package that names a primitive breaks it. */
    @Test
    void theShapeRuleCatchesAKernelThatNamesAPrimitive() {
        JavaClasses wrong = new ClassFileImporter().importClasses(io.tenure.core.kernel.KernelNamingALock.class);
        assertThat(KERNEL_KNOWS_NO_PRIMITIVE.evaluate(wrong).getFailureReport().getDetails())
                .anySatisfy(line -> assertThat(line).contains("io.tenure.core.lock.LockTable"));
    }

    @Test
    void theImportSeesTheCore() {
        assertThat(MAIN_CLASSES.contain(TenureState.class)).isTrue();
        assertThat(MAIN_CLASSES.contain(io.tenure.core.lease.LeaseDeadlines.class)).isTrue();
        assertThat(MAIN_CLASSES.contain(CorePurityTest.class)).as("tests are not checked").isFalse();
    }

    @Test
    void coreDependsOnTheJdkAlone() {
        ONLY_THE_JDK.check(MAIN_CLASSES);
    }

    @Test
    void coreUsesNoConsensusRpcNetworkFileOrConcurrencyLibrary() {
        NO_FRAMEWORKS_NO_IO.check(MAIN_CLASSES);
    }

    @Test
    void coreReadsNoClockAndDrawsNoRandomNumbers() {
        NO_CLOCK_NO_RANDOMNESS_NO_THREADS.check(MAIN_CLASSES);
    }

    /** The rules can fail: each catches a class that breaks it. */
    @Test
    void theRulesCatchAnImpureClass() {
        JavaClasses impure = new ClassFileImporter().importClasses(ImpureExample.class);

        assertThat(NO_CLOCK_NO_RANDOMNESS_NO_THREADS.evaluate(impure).hasViolation()).isTrue();
        assertThat(NO_FRAMEWORKS_NO_IO.evaluate(impure).hasViolation()).isTrue();
        assertThat(NO_CLOCK_NO_RANDOMNESS_NO_THREADS.evaluate(impure).getFailureReport().getDetails())
                .anySatisfy(line -> assertThat(line).contains("java.util.Random"))
                .anySatisfy(line -> assertThat(line).contains("nanoTime"))
                .anySatisfy(line -> assertThat(line).contains("Instant.now"));
        assertThat(ONLY_THE_JDK.evaluate(new ClassFileImporter().importClasses(CorePurityTest.class)).hasViolation())
                .as("this test depends on ArchUnit and AssertJ").isTrue();
    }

    /** What the core must never do, in one place, to prove the rules bite. */
    @SuppressWarnings("unused")
    static final class ImpureExample {
        long decide() throws Exception {
            long salt = new Random().nextLong() + System.nanoTime() + Instant.now().toEpochMilli();
            new java.util.concurrent.ConcurrentHashMap<String, String>().put("k", "v");
            try (FileInputStream in = new FileInputStream("state")) {
                return salt + in.read();
            }
        }
    }
}
