package io.cosched.spring.boot.autoconfigure;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.syntax.elements.ClassesShouldConjunction;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import com.tngtech.archunit.library.dependencies.SliceRule;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The layout docs/architecture.md describes, as ArchUnit rules over the compiled main code of every
 * library module (all of them are on this module's test class path): core and the engines never touch
 * Spring, the auto-configuration module holds wiring only, the packages form no cycle but the one listed
 * here, and webflux's packages depend one way. Each rule fails when it matches no class.
 */
@Timeout(120)
class ArchitectureTest {

    /** cosched's main classes: the library modules' jars or class folders, not their tests. */
    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(location -> !location.contains("/test-classes/") && !location.contains("-tests.jar"))
            .importPackages("io.cosched");

    private static final String[] CORE = {
        "io.cosched", "io.cosched.internal..", "io.cosched.net..", "io.cosched.netty.."
    };
    private static final String[] ENGINES = {"io.cosched.jdbc..", "io.cosched.http.client..", "io.cosched.redis.."};
    private static final String[] SPRING_AND_REACTOR = {"org.springframework..", "reactor.core..", "reactor.netty.."};

    /** Engines and adapters the auto-configuration wires but never is. */
    private static final List<String> NOT_WIRING = List.of(
            "io.netty.channel.ChannelHandler",
            "javax.sql.DataSource",
            "java.sql.Connection",
            "org.reactivestreams.Subscriber",
            "reactor.netty.resources.LoopResources",
            "org.springframework.http.client.ClientHttpRequestFactory",
            "org.springframework.data.redis.connection.RedisConnectionFactory",
            "io.lettuce.core.resource.EventLoopGroupProvider",
            "org.springframework.web.reactive.HandlerAdapter",
            "org.springframework.web.server.session.WebSessionStore");

    /** The one package cycle in the main code today: core's API and the runtime that implements it. */
    private static final String[] KNOWN_CYCLE = {"io.cosched", "io.cosched.internal"};

    /** One slice per cosched package. */
    private static final SliceAssignment PACKAGES = new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass type) {
            return type.getPackageName().startsWith("io.cosched")
                    ? SliceIdentifier.of(type.getPackageName())
                    : SliceIdentifier.ignore();
        }

        @Override
        public String getDescription() {
            return "cosched's packages";
        }
    };

    @Test
    void coreNeverTouchesSpringReactorOrTheModulesAboveIt() {
        noClasses()
                .that()
                .resideInAnyPackage(CORE)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "org.springframework..",
                        "reactor.core..",
                        "reactor.netty..",
                        "io.cosched.spring..",
                        "io.cosched.jdbc..",
                        "io.cosched.http.client..",
                        "io.cosched.redis..")
                .because("the runtime is plain Java and Netty; everything else builds on it")
                .check(MAIN);
    }

    @Test
    void theEnginesNeverTouchSpringOrReactor() {
        noClasses()
                .that()
                .resideInAnyPackage(ENGINES)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(SPRING_AND_REACTOR)
                .because("the JDBC, HTTP and Redis engines are their library, Netty and cosched's runtime;"
                        + " Spring's adapters live in io.cosched.spring.*")
                .check(MAIN);
    }

    @Test
    void theAutoConfigurationHoldsWiringOnly() throws ClassNotFoundException {
        ClassesShouldConjunction rule = null;
        for (String name : NOT_WIRING) {
            Class<?> engine = Class.forName(name, false, getClass().getClassLoader());
            rule = rule == null
                    ? noClasses()
                            .that()
                            .resideInAPackage("io.cosched.spring.boot..")
                            .should()
                            .beAssignableTo(engine)
                    : rule.orShould().beAssignableTo(engine);
        }
        assertThat(rule).isNotNull();
        rule.because("engines belong in core, jdbc, http-client, redis or webflux; autoconfigure only wires them")
                .check(MAIN);
    }

    @Test
    void theMainCodesPackagesFormNoCycleButTheKnownOne() {
        packageCycles()
                .ignoreDependency(resideInAnyPackage(KNOWN_CYCLE), resideInAnyPackage(KNOWN_CYCLE))
                .check(MAIN);
    }

    /** When this fails the known cycle is gone: remove it from {@link #KNOWN_CYCLE} and this test. */
    @Test
    void theKnownCycleIsStillThere() {
        assertThat(packageCycles()
                        .evaluate(MAIN.that(resideInAnyPackage(KNOWN_CYCLE)))
                        .hasViolation())
                .isTrue();
    }

    /**
     * webflux's packages, one concern each, depend one way: the API on nothing of the integration; context
     * propagation and Reactor Netty's resources on core alone; streaming on the API, context and the server's
     * channels, never on the request path; the request path on those; shedding on the request path; the session
     * store on core alone.
     */
    @Test
    void theWebfluxPackagesDependOneWay() {
        String api = "io.cosched.spring.web";
        String context = "io.cosched.spring.web.context";
        String netty = "io.cosched.spring.web.netty";
        String stream = "io.cosched.spring.web.stream";
        String server = "io.cosched.spring.web.server";
        Map<String, Set<String>> allowed = Map.of(
                api,
                Set.of(),
                context,
                Set.of(),
                netty,
                Set.of(),
                stream,
                Set.of(api, context, netty),
                server,
                Set.of(api, context, netty, stream),
                "io.cosched.spring.web.shedding",
                Set.of(api, server),
                "io.cosched.spring.web.session",
                Set.of());
        assertThat(MAIN.stream()
                        .map(JavaClass::getPackageName)
                        .filter(p -> p.startsWith("io.cosched.spring.web"))
                        .distinct())
                .as("webflux's packages, each with its rule")
                .containsExactlyInAnyOrderElementsOf(allowed.keySet());
        allowed.forEach((pkg, uses) -> noClasses()
                .that()
                .resideInAPackage(pkg)
                .should()
                .dependOnClassesThat(resideInAPackage("io.cosched.spring..")
                        .and(not(resideInAnyPackage(
                                Stream.concat(Stream.of(pkg), uses.stream()).toArray(String[]::new)))))
                .check(MAIN));
    }

    private static SliceRule packageCycles() {
        return slices().assignedFrom(PACKAGES).should().beFreeOfCycles();
    }
}
