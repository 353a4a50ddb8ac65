/** WebFlux's in-memory session store, making sessions on the thread that asks for them. Depends on core alone. */
@NullMarked
package io.cosched.spring.web.session;

import org.jspecify.annotations.NullMarked;
