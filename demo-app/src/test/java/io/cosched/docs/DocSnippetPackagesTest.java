package io.cosched.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A reader can tell where every cosched type in a page's Java blocks comes from: the page names its
 * package, as the fully qualified name ({@code io.cosched.Coroutines}), an import in a block, or the
 * package in backticks ({@code `io.cosched.spring.web`}). {@link DocSnippetsCompileTest} compiles the
 * blocks with common imports, which a reader copying them does not have; this closes that gap.
 */
class DocSnippetPackagesTest {

    private static final Pattern BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern PUBLIC_TYPE =
            Pattern.compile("^public [\\w ]*?(?:class|interface|record|enum|@interface) (\\w+)", Pattern.MULTILINE);
    private static final Pattern FOREIGN_IMPORT = Pattern.compile("import (?!io\\.cosched)[\\w.]+\\.([A-Z]\\w*);");
    private static final Pattern IDENTIFIER = Pattern.compile("\\b([A-Z]\\w+)\\b");

    @Test
    void everyCoschedTypeInADocSnippetHasItsPackageNamedOnThePage() throws IOException {
        Map<String, String> packages = publicTypes(); // simple name -> package
        assertThat(packages).containsKeys("Coroutines", "IOManager", "RunAsCoroutine", "CoroutineHandlers");
        Path root = Path.of("..");
        List<Path> pages = new ArrayList<>(List.of(root.resolve("README.md")));
        try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        Map<String, Set<String>> unnamed = new TreeMap<>();
        for (Path page : pages) {
            String text = Files.readString(page);
            Matcher block = BLOCK.matcher(text);
            while (block.find()) {
                String code = block.group(1);
                Set<String> foreign = new HashSet<>();
                FOREIGN_IMPORT.matcher(code).results().forEach(r -> foreign.add(r.group(1)));
                Matcher id = IDENTIFIER.matcher(code);
                while (id.find()) {
                    String type = id.group(1);
                    String pkg = packages.get(type);
                    if (pkg != null
                            && !foreign.contains(type)
                            && !text.contains(pkg + "." + type)
                            && !text.contains("`" + pkg + "`")) {
                        unnamed.computeIfAbsent(root.relativize(page).toString(), k -> new TreeSet<>())
                                .add(type + " (" + pkg + ")");
                    }
                }
            }
        }
        assertThat(unnamed)
                .as("pages whose Java blocks use cosched types without naming their package "
                        + "(write `io.cosched.X` once, or the package in backticks)")
                .isEmpty();
    }

    /** Public types of cosched's published modules, outside io.cosched.internal. */
    private static Map<String, String> publicTypes() throws IOException {
        Map<String, String> types = new TreeMap<>();
        for (String module : List.of("core", "jdbc", "http-client", "webflux", "autoconfigure")) {
            try (Stream<Path> files = Files.walk(Path.of("..", module, "src", "main", "java"))) {
                for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                    String source = Files.readString(f);
                    Matcher pkg = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE)
                            .matcher(source);
                    if (!pkg.find() || pkg.group(1).contains(".internal")) {
                        continue;
                    }
                    Matcher type = PUBLIC_TYPE.matcher(source);
                    String name = f.getFileName().toString().replace(".java", "");
                    while (type.find()) {
                        if (type.group(1).equals(name)) {
                            types.put(name, pkg.group(1));
                        }
                    }
                }
            }
        }
        return types;
    }
}
