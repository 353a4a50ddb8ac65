package io.cosched.demo;

import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/** Where the pricing service is: {@code demo.downstream.base-url}, else this app's own stub. */
@Component
public class PricingClient {

    private final DemoProperties properties;
    private final Environment environment;

    public PricingClient(DemoProperties properties, Environment environment) {
        this.properties = properties;
        this.environment = environment;
    }

    /** The URL template of one price: {@code <base>/downstream/price/{sku}}. */
    public String priceUrl() {
        String base = properties.getDownstream().getBaseUrl();
        if (base == null) {
            base = "http://127.0.0.1:" + environment.getRequiredProperty("local.server.port");
        }
        return base + "/downstream/price/{sku}";
    }
}
