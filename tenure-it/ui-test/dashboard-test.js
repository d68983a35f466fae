// The dashboard in Debian's headless Chromium, driven by playwright-core, for DashboardBrowserTest.
//
//   node dashboard-test.js BASE_URL SCREENSHOT_DIR
//
// Talks to the Java test in lines. It prints "ready" once the page shows the member's live
// stream; then for each line it reads it waits (Playwright's waitFor, with a deadline) for what
// the line says the member now holds, answers "seen ..." with the milliseconds it took, and keeps
// a screenshot:
//
//   acquired LOCK OWNER TOKEN   -> the lock's row shows OWNER holding it with fencing token TOKEN (1 s)
//   waiting LOCK OWNER          -> OWNER is first in the lock's queue (1 s)
//   handed-off LOCK OWNER TOKEN -> OWNER holds it now with TOKEN, nobody waits (1 s)
//   search PREFIX OTHER         -> OTHER's row shows; typing PREFIX in the search box leaves only names under it (2 s)
//   done                        -> closes the browser, exits 0
//
// Anything else, or a deadline passed: prints "fail REASON", keeps dashboard-failure.png, exits 1.
"use strict";

const fs = require("fs");
const os = require("os");
const path = require("path");
const readline = require("readline");
const { chromium } = require("playwright-core");

const CHROMIUM = process.env.TENURE_CHROMIUM || "/usr/bin/chromium";
const STEP_MS = 1000;

async function main() {
  const [base, shots] = process.argv.slice(2);
  if (!base || !shots) {
    throw new Error("usage: node dashboard-test.js BASE_URL SCREENSHOT_DIR");
  }
  fs.mkdirSync(shots, { recursive: true });
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "tenure-ui-chromium-"));
  // A fresh profile (--user-data-dir) for each run: Playwright passes it to Chromium itself.
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1280, height: 900 },
    deviceScaleFactor: 1,
  });
  const page = browser.pages()[0] || await browser.newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  page.on("console", (m) => { if (m.type() === "error") problems.push("console error: " + m.text()); });
  const shot = (name) => page.screenshot({ path: path.join(shots, "dashboard-" + name + ".png"), fullPage: true });

  const row = (lock) => page.locator(`tr[data-kind="lock"][data-name="${lock}"]`);
  const lines = readline.createInterface({ input: process.stdin });
  try {
    await page.goto(base + "/ui", { timeout: 10_000 });
    await page.locator('#connection[data-state="live"]').waitFor({ timeout: 10_000 });
    await page.locator("#members tr").first().waitFor({ timeout: 10_000 });
    console.log("ready");
    for await (const line of lines) {
      const [command, ...args] = line.trim().split(/\s+/);
      const started = Date.now();
      if (command === "done") {
        break;
      } else if (command === "acquired") {
        const [lock, owner, token] = args;
        await row(lock).locator(`.holders .chip[data-owner="${owner}"][data-token="${token}"]`).waitFor({ timeout: STEP_MS });
        const took = Date.now() - started;
        await shot("acquired");
        console.log("seen acquired " + took);
      } else if (command === "waiting") {
        const [lock, owner] = args;
        await row(lock).locator(`.waiters .chip[data-owner="${owner}"][data-position="1"]`).waitFor({ timeout: STEP_MS });
        const took = Date.now() - started;
        await shot("waiting");
        console.log("seen waiting " + took);
      } else if (command === "handed-off") {
        const [lock, owner, token] = args;
        await row(lock).locator(`.holders .chip[data-owner="${owner}"][data-token="${token}"]`).waitFor({ timeout: STEP_MS });
        await row(lock).locator(".waiters .chip").waitFor({ state: "detached", timeout: STEP_MS });
        const took = Date.now() - started;
        await shot("hand-off");
        console.log("seen handed-off " + took);
      } else if (command === "search") {
        const [prefix, other] = args;
        await row(other).waitFor({ timeout: STEP_MS });
        await page.fill("#prefix", prefix);
        await row(other).waitFor({ state: "detached", timeout: 2 * STEP_MS });
        await page.waitForFunction((p) => {
          const names = [...document.querySelectorAll("#locks tr[data-name]")].map((r) => r.dataset.name);
          return names.length > 0 && names.every((n) => n.startsWith(p));
        }, prefix, { timeout: 2 * STEP_MS });
        const took = Date.now() - started;
        await shot("search");
        console.log("seen search " + took);
      } else {
        throw new Error("unknown command from the test: " + line);
      }
      if (problems.length) {
        throw new Error(problems.join("; "));
      }
    }
  } catch (e) {
    await shot("failure").catch(() => {});
    console.log("fail " + String(e.message).split("\n")[0]);
    process.exitCode = 1;
  } finally {
    lines.close();
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.log("fail " + e.message.split("\n")[0]);
  process.exit(1);
});
