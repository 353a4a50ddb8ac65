package io.cosched.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The live dashboard in a real (headless) Chromium: it polls the actuator, draws the schedulers'
 * load while a burst runs, and reports the burst's progress. Skipped when Chromium or its driver is
 * not installed; never downloads a browser or driver.
 */
@SpringBootTest(classes = DemoApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Timeout(180)
class DashboardBrowserTest {

    private static final String INSTALL_HINT = " (on Debian/Ubuntu: apt-get install chromium chromium-driver)";
    private static final Pattern OK_COUNT = Pattern.compile("\\bok ([0-9][0-9,]*)");

    @LocalServerPort
    int port;

    private ChromeDriverService service;
    private WebDriver driver;

    @BeforeEach
    void startBrowser() throws IOException {
        Path chromedriver = Path.of(env("COSCHED_CHROMEDRIVER", "/usr/bin/chromedriver"));
        Path chrome = Path.of(env("COSCHED_CHROME_BINARY", "/usr/bin/chromium"));
        Assumptions.assumeTrue(
                Files.isRegularFile(chromedriver) && Files.isExecutable(chromedriver),
                "no chromedriver at " + chromedriver + " (set COSCHED_CHROMEDRIVER to use another)" + INSTALL_HINT);
        Assumptions.assumeTrue(
                Files.isRegularFile(chrome) && Files.isExecutable(chrome),
                "no Chromium at " + chrome + " (set COSCHED_CHROME_BINARY to use another)" + INSTALL_HINT);

        // An explicit driver executable and browser binary: Selenium Manager has nothing to download.
        service = new ChromeDriverService.Builder()
                .usingDriverExecutable(chromedriver.toFile())
                .usingAnyFreePort()
                .build();
        ChromeOptions options = new ChromeOptions();
        options.setBinary(chrome.toFile());
        options.addArguments(
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-dev-shm-usage",
                "--window-size=1280,1000");
        try {
            driver = new ChromeDriver(service, options);
        } catch (RuntimeException e) {
            service.stop();
            service = null;
            throw e;
        }
    }

    @AfterEach
    void stopBrowser() {
        try {
            if (driver != null) {
                driver.quit();
            }
        } finally {
            driver = null;
            if (service != null && service.isRunning()) {
                service.stop();
            }
            service = null;
        }
    }

    @Test
    void drawsTheSchedulersLoadDuringABurst() throws IOException {
        JavascriptExecutor js = (JavascriptExecutor) driver;
        driver.get("http://127.0.0.1:" + port + "/");

        waitUpTo(30, "the dashboard to receive 3 samples from /actuator/cosched")
                .until(d ->
                        number(js.executeScript("return window.coschedDashboard ? window.coschedDashboard.samples : 0"))
                                >= 3);
        assertThat(driver.findElement(By.id("error-banner")).isDisplayed())
                .as("error banner after successful polls")
                .isFalse();

        driver.findElement(By.id("burst")).click();

        waitUpTo(
                        90,
                        "the dashboard to see load on cosched-io (coroutines and waiting > 0) and a canvas with data points")
                .until(d -> Boolean.TRUE.equals(js.executeScript("""
                        const dash = window.coschedDashboard;
                        const seen = dash && dash.maxSeen['cosched-io'];
                        const drawn = Array.from(document.querySelectorAll('canvas'))
                                .some(c => Number(c.dataset.points) > 0);
                        return !!seen && seen.coroutines > 0 && seen.waiting > 0 && drawn;
                        """)));

        waitUpTo(90, "#burst-status to show the burst done with ok > 0")
                .until(d -> burstDoneOk(d.findElement(By.id("burst-status")).getText()));

        Path screenshot = Path.of("target", "dashboard.png");
        Files.createDirectories(screenshot.getParent());
        Files.write(screenshot, ((TakesScreenshot) driver).getScreenshotAs(OutputType.BYTES));
        assertThat(screenshot).exists();
        assertThat(Files.size(screenshot))
                .as("screenshot size of " + screenshot.toAbsolutePath())
                .isGreaterThan(10 * 1024);
    }

    private WebDriverWait waitUpTo(int seconds, String what) {
        WebDriverWait wait = new WebDriverWait(driver, Duration.ofSeconds(seconds), Duration.ofMillis(200));
        wait.withMessage(() -> "waited " + seconds + " s for " + what + "; dashboard state: " + state());
        return wait;
    }

    /** The burst status line once the burst is over: "done: 3,000 / 3,000 (ok 2,990, failed 10)". */
    private static boolean burstDoneOk(String status) {
        if (status == null || !status.contains("done")) {
            return false;
        }
        Matcher m = OK_COUNT.matcher(status);
        return m.find() && Long.parseLong(m.group(1).replace(",", "")) > 0;
    }

    private String state() {
        try {
            Object s = ((JavascriptExecutor) driver).executeScript("""
                    return JSON.stringify({
                        dashboard: window.coschedDashboard,
                        points: Array.from(document.querySelectorAll('canvas')).map(c => c.dataset.points),
                        burst: (document.getElementById('burst-status') || {}).textContent
                    });""");
            return String.valueOf(s);
        } catch (RuntimeException e) {
            return "unavailable (" + e + ")";
        }
    }

    private static long number(Object value) {
        return value instanceof Number n ? n.longValue() : 0;
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }
}
