package io.cosched.docs;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;

/**
 * Every {@code ```java} block in README.md and docs/*.md compiles against the demo's classpath
 * (cosched, Spring WebFlux, RestClient, JdbcClient, Reactor). A block is tried as a whole file, as
 * class members and as method statements, with a common set of imports; an HTML comment right
 * before it, {@code <!-- context: ... -->}, may declare what the excerpt takes for granted (a
 * field, a record) without showing it to readers.
 */
@Timeout(120)
class DocSnippetsCompileTest {

    private static final Pattern BLOCK =
            Pattern.compile("(?:<!-- context: (.*?) -->\\s*\\n)?```java\\n(.*?)```", Pattern.DOTALL);

    private static final String IMPORTS = String.join(
            "\n",
            "import io.cosched.*;",
            "import io.cosched.spring.web.*;",
            "import io.cosched.spring.boot.autoconfigure.*;",
            "import org.springframework.context.annotation.*;",
            "import org.springframework.stereotype.*;",
            "import org.springframework.http.*;",
            "import org.springframework.web.bind.annotation.*;",
            "import org.springframework.web.client.*;",
            "import org.springframework.web.reactive.function.server.*;",
            "import org.springframework.web.reactive.function.client.WebClient;",
            "import org.springframework.web.server.*;",
            "import org.springframework.jdbc.core.simple.JdbcClient;",
            "import static org.springframework.web.reactive.function.server.RouterFunctions.route;",
            "import static org.springframework.web.reactive.function.server.ServerResponse.ok;",
            "import reactor.core.publisher.*;",
            "import reactor.core.scheduler.Schedulers;",
            "import java.time.*;",
            "import java.math.BigInteger;",
            "import io.micrometer.context.ContextRegistry;",
            "import io.micrometer.context.integration.Slf4jThreadLocalAccessor;",
            "import java.util.List;",
            "import java.util.Map;",
            "import java.util.Optional;",
            "import java.util.concurrent.*;",
            "import java.io.IOException;",
            "import java.io.InputStream;",
            "import java.nio.charset.StandardCharsets;",
            "import org.springframework.http.codec.ServerSentEvent;",
            "import org.springframework.web.reactive.HandlerMapping;",
            "import org.springframework.web.reactive.handler.SimpleUrlHandlerMapping;",
            "import io.cosched.spring.web.BlockingWebSocketSession.Message;",
            "");

    @TestFactory
    Stream<DynamicTest> everyJavaBlockInTheDocsCompiles() throws IOException {
        Path root = Path.of("..");
        List<Path> files = new ArrayList<>();
        files.add(root.resolve("README.md"));
        try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
        }
        List<DynamicTest> tests = new ArrayList<>();
        for (Path file : files) {
            String text = Files.readString(file);
            Matcher m = BLOCK.matcher(text);
            while (m.find()) {
                int line = (int) text.substring(0, m.start(2)).lines().count();
                String context = m.group(1) == null ? "" : m.group(1);
                String code = m.group(2);
                String name = root.relativize(file) + ":" + line;
                tests.add(DynamicTest.dynamicTest(name, () -> compiles(name, context, code)));
            }
        }
        if (tests.isEmpty()) {
            fail("no java blocks found under " + root.toAbsolutePath());
        }
        return tests.stream();
    }

    private static void compiles(String name, String context, String code) {
        String[] variants = {
            IMPORTS + code + "\n" + context + "\n",
            IMPORTS + "class Snippet {\n" + context + "\n" + code + "\n}\n",
            IMPORTS + "class Snippet {\n" + context + "\nvoid snippet() throws Exception {\n" + code + "\n}\n}\n",
        };
        StringBuilder errors = new StringBuilder();
        for (String source : variants) {
            String e = compile(source);
            if (e == null) {
                return;
            }
            errors.append("---- as:\n")
                    .append(source)
                    .append("\n---- errors:\n")
                    .append(e)
                    .append('\n');
        }
        fail(name + ": the java block does not compile as a file, as members or as statements\n" + errors);
    }

    /** Compiles one source file; returns the errors, or null. */
    private static String compile(String source) {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, null, null)) {
            Path out = Files.createTempDirectory("snippet");
            String publicType = firstPublicType(source);
            JavaFileObject unit =
                    new SimpleJavaFileObject(
                            URI.create("string:///" + publicType + ".java"), JavaFileObject.Kind.SOURCE) {
                        @Override
                        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                            return source;
                        }
                    };
            boolean ok = javac.getTask(
                            null,
                            files,
                            diagnostics,
                            List.of(
                                    "-proc:none",
                                    "-parameters",
                                    "-d",
                                    out.toString(),
                                    "-cp",
                                    classpath + File.pathSeparator + out),
                            null,
                            List.of(unit))
                    .call();
            if (ok) {
                return null;
            }
        } catch (IOException e) {
            return e.toString();
        }
        StringBuilder sb = new StringBuilder();
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() == Diagnostic.Kind.ERROR) {
                sb.append("line ")
                        .append(d.getLineNumber())
                        .append(": ")
                        .append(d.getMessage(null))
                        .append('\n');
            }
        }
        return sb.toString();
    }

    private static String firstPublicType(String source) {
        Matcher m = Pattern.compile("public\\s+(?:final\\s+|abstract\\s+)*(?:class|record|interface|enum)\\s+(\\w+)")
                .matcher(source);
        return m.find() ? m.group(1) : "Snippet";
    }
}
