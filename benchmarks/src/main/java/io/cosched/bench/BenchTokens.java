package io.cosched.bench;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.security.interfaces.RSAPublicKey;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;

/**
 * The heavy service benchmark's identity provider, offline: a fresh RSA key, its JSON Web Key set (what the
 * stub serves at {@code /jwks}, the service's {@code jwk-set-uri}) and RS256 bearer tokens signed with it.
 *
 * <pre>BenchTokens &lt;dir&gt;   writes dir/jwks.json, dir/token (scopes accounts:read quotes:read, valid a day)
 *                      and dir/token-no-scope (valid, but no scope: the service must answer 403)</pre>
 */
public final class BenchTokens {

    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    private static final String KID = "bench";

    private BenchTokens() {}

    public static void main(String[] args) throws IOException, GeneralSecurityException {
        if (args.length != 1) {
            System.err.println("usage: BenchTokens <dir>");
            System.exit(2);
        }
        Path dir = Files.createDirectories(Path.of(args[0]));
        KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
        g.initialize(2048);
        KeyPair keys = g.generateKeyPair();
        RSAPublicKey pub = (RSAPublicKey) keys.getPublic();
        Files.writeString(
                dir.resolve("jwks.json"),
                "{\"keys\":[{\"kty\":\"RSA\",\"kid\":\"" + KID
                        + "\",\"use\":\"sig\",\"alg\":\"RS256\",\"n\":\"" + unsigned(pub.getModulus()) + "\",\"e\":\""
                        + unsigned(pub.getPublicExponent()) + "\"}]}\n");
        long exp = Instant.now().plusSeconds(86_400).getEpochSecond();
        Files.writeString(dir.resolve("token"), sign(keys, "bench-user", "accounts:read quotes:read", exp));
        Files.writeString(dir.resolve("token-no-scope"), sign(keys, "bench-nobody", "", exp));
    }

    private static String sign(KeyPair keys, String subject, String scope, long exp) throws GeneralSecurityException {
        String header = b64("{\"alg\":\"RS256\",\"typ\":\"JWT\",\"kid\":\"" + KID + "\"}");
        String claims = b64("{\"sub\":\"" + subject + "\",\"scope\":\"" + scope + "\",\"iat\":"
                + Instant.now().getEpochSecond() + ",\"exp\":" + exp + "}");
        Signature rs256 = Signature.getInstance("SHA256withRSA");
        rs256.initSign(keys.getPrivate());
        rs256.update((header + "." + claims).getBytes(StandardCharsets.US_ASCII));
        return header + "." + claims + "." + B64.encodeToString(rs256.sign());
    }

    private static String b64(String json) {
        return B64.encodeToString(json.getBytes(StandardCharsets.UTF_8));
    }

    /** A JWK's unsigned big-endian integer: the two's-complement sign byte dropped. */
    private static String unsigned(BigInteger v) {
        byte[] b = v.toByteArray();
        return B64.encodeToString(b[0] == 0 ? Arrays.copyOfRange(b, 1, b.length) : b);
    }
}
