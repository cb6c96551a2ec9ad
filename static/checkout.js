/* The checkout page: asset and refund address, then the deposit address, then the live status. */
"use strict";
(function () {
  var root = document.getElementById("checkout");
  if (!root) return;
  var invoiceId = root.dataset.invoiceId;
  var networks = JSON.parse(root.dataset.networks);
  var returnUrl = /^https?:\/\//.test(root.dataset.returnUrl) ? root.dataset.returnUrl : "";
  var skew = Date.parse(root.dataset.now) - Date.now();       // server clock minus this device's
  var OPEN = ["pending", "quoted", "awaiting_payment"];
  var PANELS = { pending: "choose", quoted: "choose", awaiting_payment: "pay", paid: "paid",
                 underpaid: "underpaid", refunded: "refunded", failed: "failed", expired: "expired",
                 cancelled: "cancelled" };
  var POLL_MS = 3000, SLOW_POLL_MS = 15000, REDIRECT_SECONDS = 4;
  var invoice = { id: invoiceId, status: root.dataset.status, expires_at: root.dataset.expiresAt };
  var assets = {};
  var pollTimer = null, redirecting = false, simulated = false;
  var select = document.getElementById("asset");
  var refundInput = document.getElementById("refund-to");
  var chooseForm = document.getElementById("choose-form");
  var chooseSubmit = document.getElementById("choose-submit");

  function path(suffix) { return "/v1/public/invoices/" + encodeURIComponent(invoiceId) + (suffix || ""); }

  function remainingMs() { return Date.parse(invoice.expires_at) - (Date.now() + skew); }

  function render(next) {
    invoice = next;
    var open = OPEN.indexOf(invoice.status) >= 0;
    document.querySelectorAll("[data-panel]").forEach(function (panel) {
      panel.hidden = panel.dataset.panel !== PANELS[invoice.status];
    });
    document.querySelectorAll('[data-show="open"]').forEach(function (el) { el.hidden = !open; });
    document.querySelectorAll('[data-show="final"]').forEach(function (el) { el.hidden = open; });
    if (invoice.deposit_address) {
      var asset = assets[invoice.origin_asset];
      Tender.setText("amount_due", invoice.amount_due);
      Tender.setText("asset_label", asset ? Tender.assetLabel(asset, networks) : invoice.origin_asset.toUpperCase());
      Tender.setText("deposit_address", invoice.deposit_address);
      Tender.setText("deposit_memo", invoice.deposit_memo);
      Tender.fields("memo-box").forEach(function (el) { el.hidden = !invoice.deposit_memo; });
      Tender.fields("qr").forEach(function (img) {
        if (!img.getAttribute("src")) img.src = "/checkout/" + encodeURIComponent(invoiceId) + "/qr.svg";
      });
    }
    if (invoice.status === "awaiting_payment") {
      Tender.setText("status-text", simulated ? "Payment sent; waiting for the network to confirm it…"
                                              : "Waiting for your payment…");
    }
    if (invoice.status === "paid") startRedirect();
    tick();
  }

  function startRedirect() {
    if (!returnUrl || redirecting) return;
    redirecting = true;
    var seconds = REDIRECT_SECONDS;
    Tender.fields("redirect-note").forEach(function (el) { el.hidden = false; });
    Tender.setText("redirect-seconds", seconds);
    var timer = setInterval(function () {
      seconds -= 1;
      Tender.setText("redirect-seconds", Math.max(seconds, 0));
      if (seconds <= 0) { clearInterval(timer); window.location.assign(returnUrl); }
    }, 1000);
  }

  function tick() {
    var ms = remainingMs();
    if (isNaN(ms)) return;
    var total = Math.max(0, Math.floor(ms / 1000));
    var h = Math.floor(total / 3600), m = Math.floor((total % 3600) / 60), s = total % 60;
    var text = (h ? h + ":" + String(m).padStart(2, "0") : String(m)) + ":" + String(s).padStart(2, "0");
    Tender.setText("countdown", text);
  }

  function nextPoll(result) {
    if (!result.ok) return result.retryAfter ? result.retryAfter * 1000 : 10000;
    var status = result.data.status;
    if (status === "awaiting_payment") return POLL_MS;
    if (status === "pending" || status === "quoted") return remainingMs() <= 0 ? POLL_MS : SLOW_POLL_MS;
    // A refund may follow an underpayment, and a late deposit may still pay an expired invoice.
    if (status === "underpaid" || (status === "expired" && result.data.deposit_address)) return SLOW_POLL_MS;
    return 0;                                                   // final: nothing more to watch
  }

  function schedule(ms) {
    clearTimeout(pollTimer);
    if (ms) pollTimer = setTimeout(poll, ms);
  }

  async function poll() {
    var result = await Tender.api("GET", path());
    if (result.ok) render(result.data);
    schedule(nextPoll(result));
  }

  async function estimate() {
    var asset = assets[select.value];
    Tender.setText("refund-network", asset ? "(" + Tender.networkLabel(networks, asset.network) + ")" : "");
    Tender.setText("estimate", "");
    if (!asset) return;
    var result = await Tender.api("POST", path("/quote"), { origin_asset: asset.code, dry: true });
    if (result.ok && result.data.quote && select.value === asset.code) {
      Tender.setText("estimate", "You will send about " + result.data.quote.amount_in + " " + asset.symbol + ".");
    }
  }

  async function choose(event) {
    event.preventDefault();
    Tender.showError("choose-error", null);
    var asset = assets[select.value];
    if (!asset) { Tender.showError("choose-error", "Choose the asset you want to pay with."); select.focus(); return; }
    var address = refundInput.value.trim();
    var problem = Tender.addressProblem(address, asset, networks);
    if (problem) { Tender.showError("choose-error", problem); refundInput.focus(); return; }
    Tender.busy(chooseSubmit, "Getting your address…");
    var result = await Tender.api("POST", path("/quote"), { origin_asset: asset.code, refund_to: address, dry: false });
    Tender.busy(chooseSubmit, null);
    if (!result.ok) { Tender.showError("choose-error", result.error.message); return; }
    render(result.data.invoice);
    schedule(POLL_MS);
  }

  function copy(button) {
    var source = Tender.fields(button.dataset.copy)[0];
    var text = source ? source.textContent.trim() : "";
    var done = function () {
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = "Copy"; }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { selectText(source); });
    } else {
      selectText(source);
    }
  }

  function selectText(el) {       // no clipboard (plain http): select it for the buyer to copy
    var range = document.createRange();
    range.selectNodeContents(el);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  async function simulate(button) {
    Tender.showError("simulate-error", null);
    Tender.busy(button, "Sending…");
    var outcome = document.getElementById("outcome").value;
    var result = await Tender.api("POST", path("/simulate-payment"), { outcome: outcome });
    Tender.busy(button, null);
    if (!result.ok) { Tender.showError("simulate-error", result.error.message); return; }
    simulated = true;
    button.disabled = true;
    render(result.data);
    schedule(1000);
  }

  document.querySelectorAll("[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () { copy(button); });
  });
  var simulateButton = document.getElementById("simulate");
  if (simulateButton) simulateButton.addEventListener("click", function () { simulate(simulateButton); });
  if (chooseForm) chooseForm.addEventListener("submit", choose);
  if (select) select.addEventListener("change", estimate);

  setInterval(tick, 1000);
  Tender.loadAssets(select, networks).then(function (loaded) {
    assets = loaded;
    poll();
  });
})();
