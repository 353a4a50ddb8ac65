package io.cosched.example;

import io.cosched.IOManager;

/**
 * Runs on the class path against cosched on the module path (ModulePathTest): the API works, carrier
 * mode with the flag that names the module, and the implementation package is out of reach.
 */
public final class ModulePathProgram {
    public static void main(String[] args) throws Exception {
        Module cosched = IOManager.class.getModule();
        System.out.println("module=" + cosched.getName() + " exports="
                + cosched.getDescriptor().exports().stream()
                        .map(e -> e.source())
                        .sorted()
                        .toList());
        try (IOManager io = IOManager.builder().name("modular").threads(1).build()) {
            io.start();
            System.out.println("carrierMode=" + io.isCarrierMode());
            System.out.println(
                    "ran=" + io.spawn(() -> Thread.currentThread().isVirtual()).join());
        }
        try {
            Class.forName("io.cosched.internal.IORuntime")
                    .getMethod("defaultInstance")
                    .invoke(null);
            System.out.println("internal=reachable");
        } catch (IllegalAccessException e) {
            System.out.println("internal=hidden");
        }
    }
}
