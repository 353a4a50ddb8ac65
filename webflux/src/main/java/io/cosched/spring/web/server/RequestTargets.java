package io.cosched.spring.web.server;

import io.cosched.Internal;
import org.jspecify.annotations.Nullable;

/** A request line's target, read without building a URI: for what runs before WebFlux (shedding, its events). */
@Internal
public final class RequestTargets {

    private RequestTargets() {}

    /** The path of a request-target: "/a/b" of "/a/b?x" or "http://host/a/b"; null for "*" and the like. */
    public static @Nullable String pathOf(String uri) {
        int start = 0;
        if (!uri.startsWith("/")) {
            int scheme = uri.indexOf("://");
            if (scheme < 0) {
                return null;
            }
            start = uri.indexOf('/', scheme + 3);
            if (start < 0) {
                return "/";
            }
        }
        int end = uri.length();
        for (int i = start; i < end; i++) {
            char c = uri.charAt(i);
            if (c == '?' || c == '#') {
                end = i;
                break;
            }
        }
        return uri.substring(start, end);
    }
}
