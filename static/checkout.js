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
  // The status reaches the page within 2 s of the move (docs/checkout.md, "Live status"): a fast
  // poll of the public status route while the invoice is hot, slower once it has been quiet a while.
  var HOT_POLL_MS = 1500, QUIET_POLL_MS = 10000, HIDDEN_POLL_MS = 30000, ERROR_POLL_MS = 10000;
  var HOT_FOR_MS = 15 * 60 * 1000, WATCH_AFTER_EXPIRY_MS = 24 * 3600 * 1000, REDIRECT_SECONDS = 4;
  var ANNOUNCE_MINUTES = [30, 15, 10, 5, 2, 1];
  var invoice = { id: invoiceId, status: root.dataset.status, expires_at: root.dataset.expiresAt };
  var assets = {};
  var pollTimer = null, polling = false, redirectTimer = null, simulated = false;
  var changedAt = Date.now(), announcedMinutes = null;
  var select = document.getElementById("asset");
  var refundInput = document.getElementById("refund-to");
  var emailInput = document.getElementById("customer-email");
  var chooseForm = document.getElementById("choose-form");
  var chooseSubmit = document.getElementById("choose-submit");
  var TYPED_REFUND_KEY = "tender.refund_to." + invoiceId;      // what this browser entered (this page or the link's)

  function path(suffix) { return "/v1/public/invoices/" + encodeURIComponent(invoiceId) + (suffix || ""); }

  function remainingMs() { return Date.parse(invoice.expires_at) - (Date.now() + skew); }

  function announce(text) { Tender.setText("announce", text); }

  function typedRefund() {
    try { return window.sessionStorage.getItem(TYPED_REFUND_KEY); } catch (e) { return null; }
  }

  function rememberTypedRefund(address) {
    try { window.sessionStorage.setItem(TYPED_REFUND_KEY, address); } catch (e) { /* private mode: no guard */ }
  }

  // The deposit instructions are shown only with the refund address this browser entered: an
  // invoice someone else committed would send any refund to them.
  function notYours(data) {
    var typed = typedRefund();
    // The view shows the committed address shortened; what this browser typed is shortened alike.
    return !!(typed && data.refund_to && data.deposit_address && Tender.shortened(typed) !== data.refund_to &&
              (OPEN.indexOf(data.status) >= 0 || data.status === "underpaid"));
  }

  function panelName(data) { return notYours(data) ? "not-yours" : PANELS[data.status]; }

  function panelOf(data) { return document.querySelector('[data-panel="' + panelName(data) + '"]'); }

  function show(name, visible) {
    document.querySelectorAll('[data-show="' + name + '"]').forEach(function (el) { el.hidden = !visible; });
  }

  function assetLabel() {
    var asset = assets[invoice.origin_asset];
    return asset ? Tender.assetLabel(asset, networks) : String(invoice.origin_asset || "").toUpperCase();
  }

  function render(next) {
    var previous = invoice.status;
    invoice = next;
    var open = OPEN.indexOf(invoice.status) >= 0;
    var late = (invoice.status === "expired" || invoice.status === "cancelled") && invoice.amount_received != null;
    var panelShown = panelName(invoice);
    document.querySelectorAll("[data-panel]").forEach(function (panel) {
      panel.hidden = panel.dataset.panel !== panelShown;
    });
    show("open", open);
    show("final", !open);
    show("timer", open || (invoice.status === "underpaid" && remainingMs() > 0));
    show("topup", invoice.status === "underpaid" && remainingMs() > 0);
    show("topup-closed", invoice.status === "underpaid" && remainingMs() <= 0);
    show("late-payment", late);
    show("no-late-payment", !late);
    if (panelShown === "not-yours") {
      Tender.setText("typed_refund_to", typedRefund());
      show("topup", false);
    } else if (invoice.deposit_address) {
      renderDeposit();
    }
    renderRefund();
    if (invoice.exchange_rate) renderRate(invoice.exchange_rate, "Rate fixed: ");
    if (invoice.status === "awaiting_payment") {
      Tender.setText("status-text", invoice.amount_received != null
        ? "Payment of " + invoice.amount_received + " " + assetLabel() + " seen; waiting for the network to confirm it…"
        : simulated ? "Payment sent; waiting for the network to see it…" : "Waiting for your payment…");
    }
    if (invoice.status === "paid") startRedirect(); else stopRedirect();
    if (invoice.status !== previous || panelShown === "not-yours") statusChanged();
    tick();
  }

  function renderDeposit() {
    Tender.setText("amount_due", invoice.amount_due);
    Tender.setText("asset_label", assetLabel());
    Tender.setText("deposit_address", invoice.deposit_address);
    Tender.setText("deposit_memo", invoice.deposit_memo);
    Tender.setText("committed_refund_to", invoice.refund_to);
    Tender.setText("amount_received", invoice.amount_received);
    Tender.setText("amount_remaining", invoice.amount_remaining);
    Tender.fields("memo-box").forEach(function (el) { el.hidden = !invoice.deposit_memo; });
    Tender.fields("memo-line").forEach(function (el) { el.hidden = !invoice.deposit_memo; });
    Tender.fields("qr").forEach(function (img) {
      if (!img.getAttribute("src")) img.src = "/checkout/" + encodeURIComponent(invoiceId) + "/qr.svg";
      img.alt = "QR code of the deposit address " + invoice.deposit_address;   // the address is its text
    });
  }

  // The invoice currency's rate to the payout asset's: estimated before the commit, fixed after it.
  function renderRate(rate, label) {
    Tender.fields("rate").forEach(function (el) {
      if (rate) el.textContent = label + "1 " + rate.from + " = " + rate.rate + " " + rate.to;
      el.hidden = !rate;
    });
  }

  // Where the money went (a refund) or goes back to (the refund address, while it may still be refunded).
  function renderRefund() {
    var refund = invoice.refund;
    var pending = invoice.refund_to && ["underpaid", "refunded", "failed"].indexOf(invoice.status) >= 0;
    Tender.fields("refund-box").forEach(function (el) { el.hidden = !(refund || pending); });
    Tender.fields("refund-done").forEach(function (el) { el.hidden = !refund; });
    Tender.fields("refund-tx").forEach(function (el) { el.hidden = !(refund && refund.transaction_hash); });
    Tender.setText("refund_address", (refund && refund.address) || invoice.refund_to);
    if (!refund) return;
    // One line per asset and address: sums of different assets never add up.
    Tender.setText("refund_sent", (invoice.refunds || [refund]).map(function (sent) {
      var asset = assets[sent.asset];
      var label = asset ? Tender.assetLabel(asset, networks) : sent.asset.toUpperCase();
      return sent.amount + " " + label + (sent.address ? " to " + sent.address : "");
    }).join("; "));
    Tender.setText("refund_hash", refund.transaction_hash);
  }

  function statusChanged() {
    changedAt = Date.now();
    var panel = panelOf(invoice);
    var heading = panel && panel.querySelector("h1, h2");
    if (!heading) return;
    var words = heading.textContent.trim();
    var first = panel.querySelector("p:not([hidden])");
    announce(words + ". " + (first ? first.textContent.replace(/\s+/g, " ").trim() : ""));
    // Keyboard users keep their place: focus moves only when the focused control just disappeared.
    var focused = document.activeElement;
    if (!focused || focused === document.body || !focused.offsetParent) heading.focus();
  }

  function startRedirect() {
    if (!returnUrl || redirectTimer) return;
    var seconds = REDIRECT_SECONDS;
    Tender.fields("redirect-note").forEach(function (el) { el.hidden = false; });
    Tender.setText("redirect-seconds", seconds);
    redirectTimer = setInterval(function () {
      seconds -= 1;
      Tender.setText("redirect-seconds", Math.max(seconds, 0));
      if (seconds <= 0) { stopRedirect(); window.location.assign(returnUrl); }
    }, 1000);
  }

  function stopRedirect() {       // a paid invoice can still be refunded: then the buyer stays to read it
    if (!redirectTimer) return;
    clearInterval(redirectTimer);
    redirectTimer = null;
    Tender.fields("redirect-note").forEach(function (el) { el.hidden = true; });
  }

  function tick() {
    var ms = remainingMs();
    if (isNaN(ms)) return;
    var total = Math.max(0, Math.floor(ms / 1000));
    var h = Math.floor(total / 3600), m = Math.floor((total % 3600) / 60), s = total % 60;
    var text = (h ? h + ":" + String(m).padStart(2, "0") : String(m)) + ":" + String(s).padStart(2, "0");
    Tender.setText("countdown", text);
    announceTimeLeft(Math.ceil(ms / 60000));
  }

  // The countdown is read out now and then (on load, then at a few marks), never every second.
  function announceTimeLeft(minutes) {
    if (OPEN.indexOf(invoice.status) < 0 || minutes <= 0) return;
    var mark = announcedMinutes === null ? minutes
      : ANNOUNCE_MINUTES.filter(function (m) { return minutes <= m && m < announcedMinutes; })[0];
    if (mark === undefined) return;
    announcedMinutes = minutes;
    announce((minutes === 1 ? "1 minute" : minutes + " minutes") + " left to pay.");
  }

  // Whether the invoice can still change in a way the buyer should see.
  function watched(data) {
    if (OPEN.indexOf(data.status) >= 0 || data.status === "underpaid") return true;
    if (data.status === "paid") return data.swap_status === "processing";   // an overpayment's refund may follow
    if (data.status === "expired" || data.status === "cancelled") {
      // A late payment may still come, or the refund of one that came.
      return !!data.deposit_address && !data.refund && remainingMs() > -WATCH_AFTER_EXPIRY_MS;
    }
    return false;
  }

  function nextPoll(result) {
    if (!result.ok) return result.retryAfter ? result.retryAfter * 1000 : ERROR_POLL_MS;
    if (!watched(result.data)) return 0;                        // final: nothing more to watch
    if (document.hidden) return HIDDEN_POLL_MS;                 // polled at once when shown again
    var hot = Date.now() - changedAt < HOT_FOR_MS || result.data.amount_received != null ||
              (OPEN.indexOf(result.data.status) >= 0 && remainingMs() <= 0);
    return hot ? HOT_POLL_MS : QUIET_POLL_MS;
  }

  function schedule(ms) {
    clearTimeout(pollTimer);
    pollTimer = ms ? setTimeout(poll, ms) : null;
  }

  async function poll() {
    if (polling) return;
    polling = true;
    clearTimeout(pollTimer);
    var result = await Tender.api("GET", path());
    polling = false;
    if (result.ok) {
      Tender.showError("poll-error", null);
      render(result.data);
    } else {
      Tender.showError("poll-error", "We could not check the payment status. " + result.error.message +
                       " The page keeps trying.", poll);
    }
    schedule(nextPoll(result));
  }

  async function estimate() {
    var asset = assets[select.value];
    Tender.setText("refund-network", asset ? "(" + Tender.networkLabel(networks, asset.network) + ")" : "");
    Tender.setText("estimate", "");
    Tender.showError("estimate-error", null);
    if (!asset) return;
    var result = await Tender.api("POST", path("/quote"), { origin_asset: asset.code, dry: true });
    if (select.value !== asset.code) return;                    // the buyer has picked another since
    if (result.ok && result.data.quote) {
      Tender.setText("estimate", "You will send about " + result.data.quote.amount_in + " " + asset.symbol + ".");
      if (!invoice.exchange_rate && result.data.estimate) {
        renderRate(result.data.estimate.exchange_rate, "Estimated rate (fixed when you get your address): ");
      }
    } else if (!result.ok && result.error.code === "invoice_not_payable") {
      poll();                                                   // cancelled or expired meanwhile: show it
    } else if (!result.ok) {
      var reason = Tender.transient(result) ? result.error.message : "The price service turned the request down.";
      Tender.showError("estimate-error", "We could not get a price in " + Tender.assetLabel(asset, networks) +
                       ". " + reason, function () { select.focus(); estimate(); });
    }
  }

  async function choose(event) {
    if (event) event.preventDefault();
    Tender.showError("choose-error", null);
    var asset = assets[select.value];
    if (!asset) { Tender.showError("choose-error", "Choose the asset you want to pay with."); select.focus(); return; }
    var address = refundInput.value.trim();
    var problem = Tender.addressProblem(address, asset, networks);
    if (problem) { Tender.showError("choose-error", problem); refundInput.focus(); return; }
    rememberTypedRefund(address);
    Tender.busy(chooseSubmit, "Getting your address…");
    var body = { origin_asset: asset.code, refund_to: address, dry: false };
    var email = emailInput ? emailInput.value.trim() : "";
    if (email) body.customer_email = email;           // optional: where the receipt goes
    var result = await Tender.api("POST", path("/quote"), body);
    Tender.busy(chooseSubmit, null);
    if (!result.ok) {
      if (result.error.code === "invoice_not_payable") { poll(); return; }
      if (result.error.code === "invoice_already_committed") poll();   // shows it is not this buyer's
      Tender.showError("choose-error", result.error.message, Tender.transient(result) ? choose : null);
      return;
    }
    render(result.data.invoice);
    document.getElementById("pay-heading").focus();             // the form is gone: go to what replaced it
    schedule(HOT_POLL_MS);
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
    if (!result.ok) {
      Tender.showError("simulate-error", result.error.message,
                       Tender.transient(result) ? function () { simulate(button); } : null);
      return;
    }
    simulated = true;
    button.disabled = true;
    render(result.data);
    schedule(HOT_POLL_MS);
  }

  document.querySelectorAll("[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () { copy(button); });
  });
  var simulateButton = document.getElementById("simulate");
  if (simulateButton) simulateButton.addEventListener("click", function () { simulate(simulateButton); });
  if (chooseForm) chooseForm.addEventListener("submit", choose);
  if (select) select.addEventListener("change", estimate);
  document.addEventListener("visibilitychange", function () {
    if (!document.hidden && watched(invoice)) poll();          // back to the page: the status now
  });

  // Before the first poll: the page was rendered with the deposit instructions of an invoice that
  // may not be this buyer's; hide them at once rather than after a round trip.
  if (notYours({ status: root.dataset.status, refund_to: root.dataset.refundTo, deposit_address: true })) {
    render({ id: invoiceId, status: root.dataset.status, expires_at: root.dataset.expiresAt,
             refund_to: root.dataset.refundTo, deposit_address: "pending" });
  }
  setInterval(tick, 1000);
  poll();
  Tender.loadAssets(select, networks).then(function (loaded) {
    assets = loaded;
    if ("deposit_address" in invoice) render(invoice);          // asset names instead of codes
  });
})();
