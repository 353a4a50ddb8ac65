package io.cosched.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Every {@code cosched.*} property as an IDE and the docs show it (the configuration processor's metadata): its
 * name, default and description, pinned in {@code configuration-properties.tsv}. Moving a property between
 * classes must not change them; a property added or changed on purpose is written there too.
 */
@Timeout(30)
class ConfigurationMetadataTest {

    @Test
    void everyPropertyKeepsItsNameDefaultAndDescription() throws IOException {
        List<String> expected = new ArrayList<>();
        try (InputStream in = getClass().getResourceAsStream("configuration-properties.tsv")) {
            assertThat(in).as("configuration-properties.tsv").isNotNull();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    expected.add(line);
                }
            }
        }
        List<String> generated = new ArrayList<>();
        JsonMapper json = JsonMapper.builder().build();
        Enumeration<URL> files =
                getClass().getClassLoader().getResources("META-INF/spring-configuration-metadata.json");
        for (URL file : Collections.list(files)) {
            try (InputStream in = file.openStream()) {
                JsonNode properties = json.readTree(in).get("properties");
                for (int i = 0; properties != null && i < properties.size(); i++) {
                    JsonNode p = properties.get(i);
                    String name = p.get("name").asString();
                    if (name.startsWith("cosched.") || name.startsWith("management.endpoint.cosched.")) {
                        JsonNode dflt = p.get("defaultValue");
                        JsonNode description = p.get("description");
                        generated.add(name + "\t" + (dflt == null ? "" : dflt.toString()) + "\t"
                                + (description == null ? "" : description.asString()));
                    }
                }
            }
        }
        Collections.sort(generated);
        assertThat(generated).containsExactlyElementsOf(expected);
    }
}
