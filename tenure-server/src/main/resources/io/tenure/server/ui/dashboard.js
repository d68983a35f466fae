// Tenure dashboard: reads the member's event stream (GET /v1/dashboard/events) and draws it.
// Plain JavaScript, no framework, no other origin. The stream is read with fetch(), not
// EventSource, so that a bearer token goes in the Authorization header and never into a URL.
"use strict";

(function () {
  const TOKEN_KEY = "tenure.dashboard.token";
  const RETRY_MS = [500, 1000, 2000, 5000];
  const state = { prefix: "", abort: null, retries: 0, leases: [], samples: [], lastRows: new Map() };

  const $ = (id) => document.getElementById(id);

  /** A DOM element: el("td", {class: "name"}, "text", child, ...). Text is set as text, never as HTML. */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value !== undefined && value !== null) {
        node.setAttribute(key, String(value));
      }
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function token() {
    return sessionStorage.getItem(TOKEN_KEY);
  }

  function setConnection(stateName, text) {
    const c = $("connection");
    c.dataset.state = stateName;
    c.textContent = text;
  }

  function showError(text) {
    const e = $("error");
    e.hidden = !text;
    e.textContent = text || "";
  }

  // ---- the stream ------------------------------------------------------------------------------

  async function connect() {
    if (state.abort) state.abort.abort();
    const abort = new AbortController();
    state.abort = abort;
    setConnection("connecting", "connecting…");
    const headers = { Accept: "text/event-stream" };
    if (token()) headers.Authorization = "Bearer " + token();
    const query = state.prefix ? "?prefix=" + encodeURIComponent(state.prefix) : "";
    let response;
    try {
      response = await fetch("/v1/dashboard/events" + query, { headers, signal: abort.signal, cache: "no-store" });
    } catch (e) {
      if (!abort.signal.aborted) retryLater("cannot reach the member: " + e.message);
      return;
    }
    if (response.status === 401) {
      const hadToken = !!token();
      sessionStorage.removeItem(TOKEN_KEY);
      askForToken(hadToken ? "That token was refused (wrong or expired): " + (await errorText(response)) : null);
      return;
    }
    if (!response.ok) {
      const text = await errorText(response);
      if (response.status === 400) {
        setConnection("down", "refused");
        showError(text);
        return; // a bad search: the user changes it
      }
      retryLater(text);
      return;
    }
    $("login").hidden = true;
    showError(null);
    state.retries = 0;
    setConnection("live", "live");
    try {
      await readEvents(response.body, abort.signal);
      if (!abort.signal.aborted) retryLater("the member closed the stream");
    } catch (e) {
      if (!abort.signal.aborted) retryLater("the stream broke: " + e.message);
    }
  }

  async function errorText(response) {
    try {
      const body = await response.json();
      return body.message || response.status + " " + response.statusText;
    } catch (e) {
      return response.status + " " + response.statusText;
    }
  }

  function retryLater(reason) {
    const wait = RETRY_MS[Math.min(state.retries, RETRY_MS.length - 1)];
    state.retries++;
    setConnection("down", "reconnecting");
    showError(reason + "; trying again in " + (wait / 1000) + " s");
    setTimeout(connect, wait);
  }

  /** Parses the server-sent event format (event:, data:, a blank line ends an event) from a byte stream. */
  async function readEvents(body, signal) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let event = "message";
    let data = [];
    while (!signal.aborted) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let newline;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline).replace(/\r$/, "");
        buffer = buffer.slice(newline + 1);
        if (line === "") {
          if (data.length) dispatch(event, data.join("\n"));
          event = "message";
          data = [];
        } else if (line.startsWith(":")) {
          // a comment: the member's keep-alive
        } else {
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "event") event = text;
          else if (field === "data") data.push(text);
        }
      }
    }
  }

  function dispatch(event, text) {
    const body = JSON.parse(text);
    if (event === "snapshot") render(body);
    else if (event === "rates") addSamples(body.samples || []);
  }

  function askForToken(message) {
    state.abort && state.abort.abort();
    setConnection("locked", "sign-in needed");
    $("login").hidden = false;
    const e = $("login-error");
    e.hidden = !message;
    e.textContent = message || "";
    $("token").focus();
  }

  // ---- the snapshot ----------------------------------------------------------------------------

  function render(s) {
    $("member-name").textContent = s.member.name;
    $("leader").textContent = s.cluster.leader || "none known";
    $("term").textContent = s.cluster.term;
    $("commit-index").textContent = s.cluster.commit_index;
    $("applied-index").textContent = s.cluster.applied_index;

    const locks = s.locks.items.map(lockRow);
    fill("locks", locks, s.locks, "lock", s.totals && s.totals.locks);
    fill("semaphores", s.semaphores.items.map(semaphoreRow), s.semaphores, "semaphore", s.totals && s.totals.semaphores);
    const others = [].concat(
      s.elections.items.map((e) => otherRow(e, "election")),
      s.barriers.items.map((b) => otherRow(b, "barrier")),
      s.latches.items.map((l) => otherRow(l, "latch")));
    const more = { more: s.elections.more || s.barriers.more || s.latches.more };
    fill("others", others, more, null, null);
    renderLeases(s.leases, s.totals && s.totals.leases);
    renderMembers(s.cluster.members);
    const t = s.totals;
    const count = (n, one, many) => n + " " + (n === 1 ? one : many);
    $("totals").textContent = t ? "in this member: " + count(t.locks, "lock", "locks") + ", " + count(t.semaphores, "semaphore", "semaphores")
      + ", " + count(t.leases, "lease", "leases") : "";
  }

  /** Replaces a table's rows; a row whose content changed since the last snapshot flashes. */
  function fill(id, rows, section, kind, total) {
    const body = $(id);
    const previous = state.lastRows.get(id) || new Map();
    const now = new Map();
    for (const row of rows) {
      const key = row.dataset.key;
      const signature = row.textContent;
      now.set(key, signature);
      if (previous.size && previous.get(key) !== signature) row.classList.add("changed");
    }
    state.lastRows.set(id, now);
    body.replaceChildren(...rows);
    $(id + "-empty").hidden = rows.length > 0;
    body.closest("table").hidden = rows.length === 0;
    let count = rows.length ? String(rows.length) : "";
    if (section.more) count = "first " + rows.length + (total ? " of " + total : "") + " (search to narrow)";
    $(id + "-count").textContent = count;
  }

  function holderChip(h) {
    return el("span", { class: "chip holder", "data-owner": h.owner, "data-token": h.fencing_token },
      el("span", { class: "who" }, h.owner || "(no client id)"),
      el("span", { class: "lease" }, "lease " + h.lease_id),
      h.permits !== undefined ? el("span", { class: "lease" }, "×" + h.permits) : null,
      el("span", { class: "token", title: "fencing token" }, "#" + h.fencing_token));
  }

  function waiterChips(waiters) {
    if (!waiters.length) return [el("span", { class: "muted" }, "none")];
    return waiters.map((w, i) => el("span", { class: "chip waiter", "data-owner": w.owner, "data-position": i + 1 },
      el("span", { class: "pos" }, (i + 1) + "."),
      el("span", { class: "who" }, w.owner || "(no client id)"),
      el("span", { class: "lease" }, "lease " + w.lease_id + (w.mode === "read" ? " · read" : "") + (w.permits ? " · ×" + w.permits : ""))));
  }

  function lockRow(l) {
    return el("tr", { "data-kind": "lock", "data-name": l.name, "data-key": "lock/" + l.name },
      el("td", { class: "name" }, l.name),
      el("td", {}, el("span", { class: "badge " + l.mode }, l.mode)),
      el("td", { class: "holders" }, ...l.holders.map(holderChip)),
      el("td", { class: "waiters" }, ...waiterChips(l.waiters)));
  }

  function semaphoreRow(s) {
    return el("tr", { "data-kind": "semaphore", "data-name": s.name, "data-key": "semaphore/" + s.name },
      el("td", { class: "name" }, s.name),
      el("td", { class: "mono" }, (s.limit - s.available) + " / " + s.limit + " held"),
      el("td", { class: "holders" }, ...(s.holders.length ? s.holders.map(holderChip) : [el("span", { class: "muted" }, "idle")])),
      el("td", { class: "waiters" }, ...waiterChips(s.waiters)));
  }

  function otherRow(r, kind) {
    let held;
    if (kind === "election") held = r.holders.map(holderChip);
    else if (kind === "barrier") held = [el("span", { class: "mono" }, r.waiters.length + " of " + r.parties + " parties arrived")];
    else held = [el("span", { class: "mono" }, "count " + r.count + " of " + r.initial_count)];
    return el("tr", { "data-kind": kind, "data-name": r.name, "data-key": kind + "/" + r.name },
      el("td", { class: "name" }, r.name),
      el("td", {}, el("span", { class: "badge" }, kind)),
      el("td", { class: "holders" }, ...held),
      el("td", { class: "waiters" }, ...waiterChips(r.waiters)));
  }

  function renderLeases(leases, total) {
    const received = performance.now();
    state.leases = leases.items.map((l) => ({ ttl: l.ttl_ms, deadline: l.ttl_remaining_ms < 0 ? null : received + l.ttl_remaining_ms }));
    const rows = leases.items.map((l, i) => {
      const names = [].concat(l.holds.map((n) => "holds " + n), l.waits.map((n) => "waits for " + n));
      return el("tr", { "data-kind": "lease", "data-lease": l.lease_id, "data-key": "lease/" + l.lease_id },
        el("td", { class: "mono" }, l.lease_id),
        el("td", { class: "owner" }, l.owner || el("span", { class: "muted" }, "(none)")),
        el("td", {}, el("div", { class: "ttl", "data-index": i }, el("span", { class: "bar" }, el("i")), el("span", { class: "left" }, ""))),
        el("td", { class: "names" }, names.length ? names.join(", ") : el("span", { class: "muted" }, "nothing")));
    });
    fill("leases", rows, leases, "lease", total);
    tickLeases();
  }

  /** The live countdown: each lease's time to live on the member's clock, counted down here between snapshots. */
  function tickLeases() {
    const now = performance.now();
    for (const ttl of document.querySelectorAll("#leases .ttl")) {
      const lease = state.leases[Number(ttl.dataset.index)];
      if (!lease) continue;
      const bar = ttl.querySelector("i");
      const left = ttl.querySelector(".left");
      if (lease.deadline === null) {
        left.textContent = "?";
        bar.style.width = "0";
        continue;
      }
      const remaining = Math.max(0, lease.deadline - now);
      const fraction = Math.min(1, remaining / lease.ttl);
      bar.style.width = (fraction * 100).toFixed(1) + "%";
      left.textContent = (remaining / 1000).toFixed(1) + " s";
      ttl.classList.toggle("low", fraction < 0.34 && remaining > 0);
      ttl.classList.toggle("gone", remaining === 0);
    }
  }

  function renderMembers(members) {
    $("members").replaceChildren(...members.map((m) => el("tr", { "data-member": m.name },
      el("td", { class: "mono" }, m.name),
      el("td", {}, m.leader ? el("span", { class: "badge leader" }, "leader") : el("span", { class: "muted" }, "follower"),
        m.self ? el("span", { class: "badge" }, "this member") : null),
      el("td", { class: "mono endpoints" }, m.client_endpoint || "–", el("br"), el("span", { class: "muted" }, m.peer_address)))));
  }

  // ---- the rates -------------------------------------------------------------------------------

  function addSamples(samples) {
    state.samples = state.samples.concat(samples).slice(-60);
    for (const figure of document.querySelectorAll(".chart")) {
      const key = figure.dataset.rate;
      const values = state.samples.map((s) => s[key]);
      const last = values.length ? values[values.length - 1] : null;
      figure.querySelector(".now").textContent = last === null || last === undefined ? "–" : format(last);
      draw(figure.querySelector("canvas"), values);
    }
  }

  function format(value) {
    return value >= 100 ? Math.round(value).toString() : value.toFixed(value >= 10 ? 1 : 2);
  }

  /** A small line chart of the last minute: filled area, the latest point marked, the peak written top left. */
  function draw(canvas, values) {
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth || canvas.width;
    const height = canvas.clientHeight || canvas.height;
    if (canvas.width !== Math.round(width * ratio)) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
    }
    const g = canvas.getContext("2d");
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, height);
    g.strokeStyle = "#e1e6ec";
    g.lineWidth = 1;
    g.beginPath();
    g.moveTo(0, height - 0.5);
    g.lineTo(width, height - 0.5);
    g.stroke();
    const present = values.filter((v) => v !== null && v !== undefined);
    if (!present.length) return;
    const peak = Math.max(1, ...present);
    const step = (width - 6) / 59;
    const x = (i) => width - 3 - (values.length - 1 - i) * step;
    const lastIndex = values.length - 1;
    const y = (v) => height - 3 - (v / peak) * (height - 16);
    g.beginPath();
    let started = false;
    values.forEach((v, i) => {
      if (v === null || v === undefined) return;
      if (!started) { g.moveTo(x(i), y(v)); started = true; } else { g.lineTo(x(i), y(v)); }
    });
    g.strokeStyle = "#2f6fde";
    g.lineWidth = 2;
    g.stroke();
    g.lineTo(x(lastIndex), height);
    g.lineTo(x(values.findIndex((v) => v !== null && v !== undefined)), height);
    g.closePath();
    g.fillStyle = "rgba(47, 111, 222, 0.12)";
    g.fill();
    if (values[lastIndex] !== null && values[lastIndex] !== undefined) {
      g.beginPath();
      g.arc(x(lastIndex), y(values[lastIndex]), 2.5, 0, 2 * Math.PI);
      g.fillStyle = "#2f6fde";
      g.fill();
    }
    const highest = Math.max(...present);
    if (highest > 0) {
      g.fillStyle = "#6b7785";
      g.font = "10px system-ui, sans-serif";
      g.fillText("peak " + format(highest) + " · last minute", 2, 10);
    }
  }

  // ---- the page --------------------------------------------------------------------------------

  function start() {
    let debounce = null;
    $("prefix").addEventListener("input", () => {
      clearTimeout(debounce);
      debounce = setTimeout(() => {
        state.prefix = $("prefix").value;
        state.lastRows.clear();
        connect();
      }, 250);
    });
    $("search").addEventListener("submit", (e) => e.preventDefault());
    $("login").addEventListener("submit", (e) => {
      e.preventDefault();
      const value = $("token").value.trim();
      if (!value) return;
      sessionStorage.setItem(TOKEN_KEY, value);
      $("token").value = "";
      connect();
    });
    setInterval(tickLeases, 100);
    window.addEventListener("resize", () => addSamples([]));
    connect();
  }

  start();
})();
