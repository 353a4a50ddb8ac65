package io.cosched.sample;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.List;

/** An RSA key pair for a test: the service gets the public key, the test signs tokens with the private one. */
final class Tokens {

    private final KeyPair keys;

    Tokens() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
            g.initialize(2048);
            this.keys = g.generateKeyPair();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The {@code sample.jwt.public-key} property's value. */
    String publicKey() {
        return Base64.getEncoder().encodeToString(keys.getPublic().getEncoded());
    }

    /** The public key as a JSON Web Key set, what a {@code jwk-set-uri} serves. */
    String jwkSet() {
        return new com.nimbusds.jose.jwk.JWKSet(new com.nimbusds.jose.jwk.RSAKey.Builder(
                                (java.security.interfaces.RSAPublicKey) keys.getPublic())
                        .build())
                .toString();
    }

    String token(String subject, Instant expires, String... roles) {
        return sign(subject, expires, roles, keys);
    }

    /** A token signed by another key, which the service must refuse. */
    static String forged(String subject, String... roles) {
        return sign(subject, Instant.now().plusSeconds(300), roles, new Tokens().keys);
    }

    private static String sign(String subject, Instant expires, String[] roles, KeyPair with) {
        try {
            SignedJWT jwt = new SignedJWT(
                    new JWSHeader(JWSAlgorithm.RS256),
                    new JWTClaimsSet.Builder()
                            .subject(subject)
                            .claim("roles", List.of(roles))
                            .issueTime(new Date())
                            .expirationTime(Date.from(expires))
                            .build());
            jwt.sign(new RSASSASigner(with.getPrivate()));
            return jwt.serialize();
        } catch (com.nimbusds.jose.JOSEException e) {
            throw new IllegalStateException(e);
        }
    }
}
