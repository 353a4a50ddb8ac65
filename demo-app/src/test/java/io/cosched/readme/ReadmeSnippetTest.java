package io.cosched.readme;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's Java snippet is the compiled {@link QuoteController} of this package, line for line
 * from its first import: what the snippet uses, it imports, and those imports compile.
 */
class ReadmeSnippetTest {

    @Test
    void theReadmeHandlerIsTheCompiledOne() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        Matcher m = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL).matcher(readme);
        assertThat(m.find()).as("a java block in README.md").isTrue();
        String snippet = m.group(1).strip();
        String source = Files.readString(Path.of("src/test/java/io/cosched/readme/QuoteController.java"));
        String body = source.substring(source.indexOf("\nimport ") + 1).strip();
        assertThat(snippet).startsWith("import ").isEqualTo(body);
    }
}
