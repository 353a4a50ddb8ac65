package io.cosched.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every relative link in README.md and docs/**.md points at a file that exists, and every anchor at a heading of
 * its target as GitHub names it: so a section that moves, or a heading that changes, cannot leave a link behind.
 * Links in fenced code blocks and in code spans are not links; http(s) and mailto links are not checked.
 */
class DocLinksTest {

    private static final Pattern FENCE = Pattern.compile("^\\s*(```|~~~)");
    private static final Pattern HEADING = Pattern.compile("^ {0,3}#{1,6}\\s+(.*?)(?:\\s+#+)?\\s*$");
    // [text](target) or [text](target "title"); the text may hold one level of brackets and span lines
    private static final Pattern LINK =
            Pattern.compile("\\[((?:[^\\[\\]]|\\[[^\\]]*\\])*)\\]\\(([^()\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern CODE_SPAN = Pattern.compile("`+[^`\\n]*`+");
    private static final Pattern SCHEME = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:");
    // GitHub keeps letters, marks, digits, connector punctuation ('_'), spaces and '-'
    private static final Pattern NOT_IN_SLUG = Pattern.compile("[^\\p{L}\\p{M}\\p{N}\\p{Pc} -]");

    private final Map<Path, Set<String>> anchorsByFile = new HashMap<>();

    @Test
    void everyRelativeLinkPointsAtAFileAndAHeadingThatExist() throws IOException {
        Path root = Path.of("..");
        List<Path> pages = new ArrayList<>(List.of(root.resolve("README.md")));
        try (Stream<Path> docs = Files.walk(root.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        assertThat(pages).contains(root.resolve("docs/benchmarks.md"));
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path page : pages) {
            String text = outsideCode(Files.readString(page));
            Matcher link = LINK.matcher(text);
            while (link.find()) {
                String target = link.group(2);
                if (SCHEME.matcher(target).find()) {
                    continue;
                }
                checked++;
                String problem = problem(page, target);
                if (problem != null) {
                    int line = 1
                            + (int) text.substring(0, link.start())
                                    .chars()
                                    .filter(c -> c == '\n')
                                    .count();
                    broken.add(root.relativize(page) + ":" + line + " -> " + target + problem);
                }
            }
        }
        assertThat(checked)
                .as("relative links found under " + root.toAbsolutePath())
                .isGreaterThan(100);
        assertThat(broken)
                .withFailMessage("%d broken links (file:line -> target):%n%s", broken.size(), String.join("\n", broken))
                .isEmpty();
    }

    @Test
    void headingsAreNamedAsGitHubNamesThem() {
        assertThat(slug("A fleet behind HAProxy (issue 50, 2026-11-28)"))
                .isEqualTo("a-fleet-behind-haproxy-issue-50-2026-11-28");
        assertThat(slug("Where a hello's CPU goes, and what a lean coroutine route would cost"))
                .isEqualTo("where-a-hellos-cpu-goes-and-what-a-lean-coroutine-route-would-cost");
        assertThat(slug("Redis and a blocking `WebClient` on the loop (2026-11-24)"))
                .isEqualTo("redis-and-a-blocking-webclient-on-the-loop-2026-11-24");
        assertThat(slug("Park → resume")).isEqualTo("park--resume");
        assertThat(slug("See [the guide](web.md) for `cosched_web`")).isEqualTo("see-the-guide-for-cosched_web");
        assertThat(anchors(List.of("# Title", "## hello", "```", "## hello", "```", "## hello", "### Hello")))
                .containsExactlyInAnyOrder("title", "hello", "hello-1", "hello-2");
    }

    /** Why the target does not resolve, or null when it does. */
    private String problem(Path page, String target) {
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        Path file = path.isEmpty() ? page : page.getParent().resolve(path).normalize();
        if (!Files.exists(file)) {
            return " (no such file)";
        }
        if (hash < 0 || !file.toString().endsWith(".md")) {
            return null;
        }
        String anchor = target.substring(hash + 1);
        Set<String> anchors = anchorsByFile.computeIfAbsent(file, DocLinksTest::anchors);
        return anchors.contains(anchor) ? null : " (no such heading)";
    }

    /** The text with fenced blocks blanked and code spans masked, every character keeping its line. */
    private static String outsideCode(String text) {
        StringBuilder out = new StringBuilder(text.length());
        boolean fenced = false;
        for (String line : text.split("\n", -1)) {
            if (FENCE.matcher(line).find()) {
                fenced = !fenced;
                out.append('\n');
            } else {
                out.append(fenced ? "" : line).append('\n');
            }
        }
        Matcher code = CODE_SPAN.matcher(out);
        StringBuilder masked = new StringBuilder(out.length());
        while (code.find()) {
            code.appendReplacement(masked, "x".repeat(code.group().length()));
        }
        return code.appendTail(masked).toString();
    }

    private static Set<String> anchors(Path file) {
        try {
            return anchors(Files.readAllLines(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** GitHub's anchors for a page's headings: the second heading of one name gets -1, the third -2. */
    static Set<String> anchors(List<String> lines) {
        Set<String> anchors = new HashSet<>();
        boolean fenced = false;
        for (String line : lines) {
            if (FENCE.matcher(line).find()) {
                fenced = !fenced;
                continue;
            }
            Matcher heading = HEADING.matcher(line);
            if (!fenced && heading.matches()) {
                String base = slug(heading.group(1));
                String anchor = base;
                for (int n = 1; !anchors.add(anchor); n++) {
                    anchor = base + "-" + n;
                }
            }
        }
        return anchors;
    }

    /** GitHub's slug: the heading's text as rendered, lower case, punctuation but '-' and '_' dropped, spaces to '-'. */
    static String slug(String heading) {
        String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1").replaceAll("<[^>]+>", "");
        return NOT_IN_SLUG.matcher(text.toLowerCase(Locale.ROOT)).replaceAll("").replace(' ', '-');
    }
}
