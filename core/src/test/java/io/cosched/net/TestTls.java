package io.cosched.net;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A self-signed certificate for localhost, made with the JDK's keytool, as server and client TLS contexts,
 * and as the PKCS12 store they were made from (for a test that configures TLS by file, a Spring Boot SSL
 * bundle say; deleted when the JVM exits).
 */
public final class TestTls {

    /** The password of {@link #keyStore} and of its key. */
    public static final String PASSWORD_TEXT = "changeit";

    private static final char[] PASSWORD = PASSWORD_TEXT.toCharArray();

    public final SSLContext server;
    public final SSLContext client;
    /** The PKCS12 store holding the key and its certificate (alias {@code localhost}). */
    public final Path keyStore;

    private TestTls(SSLContext server, SSLContext client, Path keyStore) {
        this.server = server;
        this.client = client;
        this.keyStore = keyStore;
    }

    public static TestTls create() throws Exception {
        Path dir = Files.createTempDirectory("cosched-tls");
        Path store = dir.resolve("localhost.p12");
        Process keytool = new ProcessBuilder(List.of(
                        Path.of(System.getProperty("java.home"), "bin", "keytool")
                                .toString(),
                        "-genkeypair",
                        "-alias",
                        "localhost",
                        "-keyalg",
                        "EC",
                        "-groupname",
                        "secp256r1",
                        "-dname",
                        "CN=localhost",
                        "-ext",
                        "SAN=dns:localhost,ip:127.0.0.1",
                        "-validity",
                        "2",
                        "-storetype",
                        "PKCS12",
                        "-keystore",
                        store.toString(),
                        "-storepass",
                        new String(PASSWORD),
                        "-keypass",
                        new String(PASSWORD)))
                .redirectErrorStream(true)
                .start();
        String out = new String(keytool.getInputStream().readAllBytes());
        if (!keytool.waitFor(60, TimeUnit.SECONDS) || keytool.exitValue() != 0) {
            throw new IllegalStateException("keytool failed: " + out);
        }
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, PASSWORD);
        }
        dir.toFile().deleteOnExit(); // registered first: deleted after the store
        store.toFile().deleteOnExit();
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, PASSWORD);
        SSLContext server = SSLContext.getInstance("TLS");
        server.init(kmf.getKeyManagers(), null, null);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        SSLContext client = SSLContext.getInstance("TLS");
        client.init(null, tmf.getTrustManagers(), null);
        return new TestTls(server, client, store);
    }
}
