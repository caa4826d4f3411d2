// A page behind ssatd, in Chromium: the slots and the scripted bids reach
// the client bundle, which renders them, and the diagnostics header says
// what ssatd decided. Run it with ../run.sh (docs/testing.md, "From Node
// with Playwright"), which sets SSATD and BIDDER.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";

const { SSATD, BIDDER } = process.env;
let browser;

before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  await fetch(`${BIDDER}/__requests`, { method: "DELETE" });
});

after(async () => {
  await browser?.close();
});

test("the bundle renders the scripted winner in its slot", async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  const resp = await page.goto(`${SSATD}/`);
  assert.equal(resp.status(), 200);

  // What ssatd decided, as known when the headers went out.
  const decisions = JSON.parse(resp.headers()["x-ssatd-diagnostics"]);
  assert.equal(decisions.eligible, true);
  assert.deepEqual(decisions.slots, ["top-leaderboard"]);

  // The bundle sets tsjs.rendered once every slot is filled.
  await page.waitForFunction(() => window.tsjs && window.tsjs.rendered === true);
  const got = await page.evaluate(() => ({
    slots: window.tsjs.adSlots.map((s) => s.id),
    bid: window.tsjs.bids["top-leaderboard"],
    rendered: document.querySelector("#ad-top-leaderboard")?.getAttribute("data-tsjs-bid"),
    frame: (() => {
      const f = document.querySelector("#ad-top-leaderboard iframe");
      return f && { w: f.width, h: f.height, sandboxed: f.hasAttribute("sandbox"), adm: f.srcdoc.includes("alpha") };
    })(),
    links: [...document.querySelectorAll("a[href^='http']")].map((a) => a.href),
  }));
  assert.deepEqual(got.slots, ["top-leaderboard"]);
  assert.equal(got.bid.hb_bidder, "alpha");
  assert.equal(got.bid.hb_pb, "2.57");
  // The winning creative is in a sandboxed iframe sized to the bid.
  assert.equal(got.rendered, "alpha alpha-top-leaderboard 2.57");
  assert.deepEqual(got.frame, { w: "728", h: "90", sandboxed: true, adm: true });
  // The page's own links name ssatd, port included, never the origin.
  const local = got.links.filter((l) => l.startsWith("http://127.0.0.1"));
  assert.ok(local.length > 0 && local.every((l) => l.startsWith(`${SSATD}/`)), local.join(" "));
  assert.deepEqual(errors, []);

  // The bidder was asked once, for the slot the page matched.
  const requests = await (await fetch(`${BIDDER}/__requests`)).json();
  assert.equal(requests.length, 1);
  assert.deepEqual(requests[0].imp.map((i) => i.id), ["top-leaderboard"]);
  await page.close();
});
