package io.cosched.spring.web.shedding;

import io.cosched.spring.web.CoroutineHandlers;
import io.cosched.spring.web.server.CoroutineRequests;
import io.cosched.spring.web.server.RequestTargets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.Resource;
import org.springframework.http.HttpMethod;
import org.springframework.http.server.PathContainer;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.RequestPredicate;
import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.support.RouterFunctionMapping;
import org.springframework.web.reactive.handler.AbstractUrlHandlerMapping;
import org.springframework.web.reactive.result.method.RequestMappingInfo;
import org.springframework.web.reactive.result.method.RequestMappingInfoHandlerMapping;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import reactor.core.publisher.Mono;

/**
 * Which requests surely run as coroutine requests, told from the method and path alone, before
 * WebFlux has seen them: what lets a full server shed them in a Netty handler instead of after
 * WebFlux's exchange, filters and handler lookup.
 *
 * <p>Read once from the application's handler mappings, in their order, as Spring dispatches: the
 * first mapping with a route whose path pattern and method fit the request decides, and the request
 * is a coroutine request when every route of that mapping that fits it runs as one. Conditions on
 * headers, parameters and media types are not evaluated: a request they would have sent elsewhere
 * (a 406, a 415, a later mapping) is counted as the route's. A mapping whose routes cannot be read
 * (a router function with an "or", a negation or a predicate of its own, a resource lookup, a
 * handler mapping of a kind not known here) may match any request: from it on, nothing is sure.
 * OPTIONS requests (CORS preflights) never are.
 */
final class ShedRoutes {

    private static final PathPatternParser PARSER = PathPatternParser.defaultInstance;

    /** A route: its path pattern (null: any path), its methods (empty: any), whether it runs as a coroutine. */
    private record Route(@Nullable PathPattern pattern, Set<String> methods, boolean coroutine) {
        boolean fits(String method, PathContainer path) {
            boolean methodFits =
                    methods.isEmpty() || methods.contains(method) || (method.equals("HEAD") && methods.contains("GET"));
            return methodFits && (pattern == null || pattern.matches(path));
        }
    }

    /** One handler mapping's routes; an opaque one may match any request. */
    private record Mapping(List<Route> routes, boolean opaque) {}

    private final List<Mapping> mappings;
    private final String basePath;
    private final boolean anyCoroutine;

    private ShedRoutes(List<Mapping> mappings, String basePath) {
        this.mappings = mappings;
        this.basePath = basePath;
        boolean any = false;
        for (Mapping m : mappings) {
            for (Route r : m.routes) {
                any |= r.coroutine;
            }
        }
        this.anyCoroutine = any;
    }

    /**
     * The routes of {@code handlerMappings}, in Spring's dispatch order.
     *
     * @param selector which annotated handler methods run as coroutines
     * @param basePath {@code spring.webflux.base-path}, or "" for none
     */
    static ShedRoutes of(
            List<? extends HandlerMapping> handlerMappings, Predicate<HandlerMethod> selector, String basePath) {
        List<Mapping> mappings = new ArrayList<>();
        for (HandlerMapping hm : handlerMappings) {
            if (hm instanceof RequestMappingInfoHandlerMapping annotated) {
                mappings.add(annotated(annotated, selector));
            } else if (hm instanceof RouterFunctionMapping functional) {
                RouterFunction<?> function = functional.getRouterFunction();
                if (function != null) {
                    RouteCollector collector = new RouteCollector();
                    function.accept(collector);
                    mappings.add(new Mapping(collector.routes, collector.opaque));
                }
            } else if (hm instanceof AbstractUrlHandlerMapping urls) {
                List<Route> routes = new ArrayList<>();
                for (PathPattern pattern : urls.getHandlerMap().keySet()) {
                    routes.add(new Route(pattern, Set.of(), false));
                }
                mappings.add(new Mapping(routes, false));
            } else {
                mappings.add(new Mapping(List.of(), true));
            }
        }
        return new ShedRoutes(List.copyOf(mappings), normalize(basePath));
    }

    private static Mapping annotated(RequestMappingInfoHandlerMapping mapping, Predicate<HandlerMethod> selector) {
        List<Route> routes = new ArrayList<>();
        for (Map.Entry<RequestMappingInfo, HandlerMethod> e :
                mapping.getHandlerMethods().entrySet()) {
            Set<String> methods = new HashSet<>();
            for (RequestMethod m : e.getKey().getMethodsCondition().getMethods()) {
                methods.add(m.name());
            }
            boolean coroutine = selector.test(e.getValue());
            for (PathPattern pattern : e.getKey().getPatternsCondition().getPatterns()) {
                routes.add(new Route(pattern, Set.copyOf(methods), coroutine));
            }
        }
        return new Mapping(routes, false);
    }

    private static String normalize(String basePath) {
        String p = basePath.strip();
        if (p.isEmpty() || p.equals("/")) {
            return "";
        }
        if (!p.startsWith("/")) {
            p = "/" + p;
        }
        return p.endsWith("/") ? p.substring(0, p.length() - 1) : p;
    }

    /** Whether any route runs as a coroutine: without one, nothing is ever shed here. */
    boolean anyCoroutine() {
        return anyCoroutine;
    }

    /**
     * Whether a request with {@code method} and {@code uri} (as on the request line: origin form,
     * or absolute form) surely runs as a coroutine request.
     */
    boolean isCoroutineRequest(String method, String uri) {
        if (!anyCoroutine || method.equals("OPTIONS")) {
            return false;
        }
        String path = RequestTargets.pathOf(uri);
        if (path == null) {
            return false;
        }
        if (!basePath.isEmpty()) {
            if (!path.startsWith(basePath)
                    || (path.length() > basePath.length() && path.charAt(basePath.length()) != '/')) {
                return false; // outside the application: Spring answers 404
            }
            path = path.length() == basePath.length() ? "/" : path.substring(basePath.length());
        }
        PathContainer container = PathContainer.parsePath(path);
        for (Mapping mapping : mappings) {
            if (mapping.opaque) {
                return false;
            }
            boolean matched = false;
            for (Route route : mapping.routes) {
                if (route.fits(method, container)) {
                    if (!route.coroutine) {
                        return false;
                    }
                    matched = true;
                }
            }
            if (matched) {
                return true;
            }
        }
        return false;
    }

    /**
     * Reads a router function's routes: each route's path (nested paths prefixed) and methods. A
     * route whose predicate is more than an "and" of paths, methods, headers, parameters and versions
     * cannot be placed: when it is not a coroutine it may match anything, and the mapping is opaque.
     */
    private static final class RouteCollector implements RouterFunctions.Visitor {
        final List<Route> routes = new ArrayList<>();
        boolean opaque;
        private final Deque<PredicateShape> nests = new ArrayDeque<>();

        @Override
        public void startNested(RequestPredicate predicate) {
            nests.push(PredicateShape.of(predicate));
        }

        @Override
        public void endNested(RequestPredicate predicate) {
            nests.pop();
        }

        @Override
        public void route(RequestPredicate predicate, HandlerFunction<?> handlerFunction) {
            boolean coroutine = CoroutineHandlers.runnerOf(handlerFunction) instanceof CoroutineRequests;
            PredicateShape shape = PredicateShape.of(predicate);
            StringBuilder path = new StringBuilder();
            Set<String> methods = shape.methods;
            boolean readable = shape.readable && shape.paths <= 1;
            // the outermost nest first
            for (var it = nests.descendingIterator(); it.hasNext(); ) {
                PredicateShape nest = it.next();
                readable &= nest.readable && nest.paths <= 1;
                append(path, nest.path);
                if (!nest.methods.isEmpty()) {
                    methods = methods.isEmpty() ? nest.methods : intersect(methods, nest.methods);
                }
            }
            append(path, shape.path);
            if (!readable) {
                opaque |= !coroutine; // a coroutine route not placed is only one not shed early
                return;
            }
            PathPattern pattern;
            try {
                pattern = path.isEmpty() ? null : PARSER.parse(path.toString());
            } catch (IllegalArgumentException notOnePattern) { // a nested prefix and a route that do not join
                opaque |= !coroutine;
                return;
            }
            routes.add(new Route(pattern, methods, coroutine));
        }

        private static void append(StringBuilder path, @Nullable String part) {
            if (part == null || part.isEmpty()) {
                return;
            }
            if (!path.isEmpty() && path.charAt(path.length() - 1) == '/' && part.startsWith("/")) {
                path.append(part, 1, part.length());
            } else {
                path.append(part);
            }
        }

        private static Set<String> intersect(Set<String> a, Set<String> b) {
            Set<String> both = new HashSet<>(a);
            both.retainAll(b);
            return both.isEmpty() ? Set.of("") : both; // no method fits both: a method name none has
        }

        @Override
        public void resources(Function<ServerRequest, Mono<Resource>> lookupFunction) {
            opaque = true;
        }

        @Override
        public void attributes(Map<String, Object> attributes) {}

        @Override
        public void unknown(RouterFunction<?> routerFunction) {
            opaque = true;
        }
    }

    /** A request predicate as far as it can be read: an "and" of at most one path, methods and narrowing conditions. */
    private static final class PredicateShape implements RequestPredicates.Visitor {
        @Nullable
        String path;

        int paths;
        Set<String> methods = Set.of();
        boolean readable = true;

        static PredicateShape of(RequestPredicate predicate) {
            PredicateShape shape = new PredicateShape();
            predicate.accept(shape);
            return shape;
        }

        @Override
        public void method(Set<HttpMethod> methods) {
            Set<String> names = new HashSet<>();
            for (HttpMethod m : methods) {
                names.add(m.name());
            }
            this.methods = this.methods.isEmpty() ? Set.copyOf(names) : RouteCollector.intersect(this.methods, names);
        }

        @Override
        public void path(String pattern) {
            path = pattern;
            paths++;
        }

        @Override
        public void pathExtension(String extension) {
            readable = false;
        }

        @Override
        public void header(String name, String value) {}

        @Override
        public void queryParam(String name, String value) {}

        @Override
        public void version(String version) {}

        @Override
        public void startAnd() {}

        @Override
        public void and() {}

        @Override
        public void endAnd() {}

        @Override
        public void startOr() {
            readable = false;
        }

        @Override
        public void or() {}

        @Override
        public void endOr() {}

        @Override
        public void startNegate() {
            readable = false;
        }

        @Override
        public void endNegate() {}

        @Override
        public void unknown(RequestPredicate predicate) {
            readable = false;
        }
    }
}
