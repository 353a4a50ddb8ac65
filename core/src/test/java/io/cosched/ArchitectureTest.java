package io.cosched;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** The runtime never depends on Spring: no compiled core class refers to org.springframework. */
class ArchitectureTest {

    @Test
    void coreClassesNeverReferToSpring() throws IOException {
        Path classes = Path.of(Scheduler.class.getProtectionDomain().getCodeSource().getLocation().getPath());
        assertThat(classes).isDirectory();
        List<Path> offenders;
        try (Stream<Path> files = Files.walk(classes)) {
            offenders = files.filter(p -> p.toString().endsWith(".class"))
                    .filter(ArchitectureTest::mentionsSpring)
                    .toList();
        }
        assertThat(offenders).isEmpty();
    }

    private static boolean mentionsSpring(Path classFile) {
        try {
            // class names in the constant pool are UTF-8 with '/' separators
            return new String(Files.readAllBytes(classFile), StandardCharsets.ISO_8859_1).contains("org/springframework");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
