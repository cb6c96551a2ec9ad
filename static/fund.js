/* The refund funding page: what to send where, a countdown, and the live status. */
"use strict";
(function () {
  var root = document.getElementById("funding");
  if (!root) return;
  var refundId = root.dataset.refundId;
  var skew = Date.parse(root.dataset.now) - Date.now();       // server clock minus this device's
  var POLL_MS = 1500, ERROR_POLL_MS = 10000;
  var FINAL = ["succeeded", "failed", "expired", "cancelled"];
  var refund = { status: root.dataset.status, funding: { expires_at: root.dataset.expiresAt } };

  function show(name, visible) {
    document.querySelectorAll('[data-show="' + name + '"]').forEach(function (el) { el.hidden = !visible; });
  }

  function render(next) {
    var changed = next.status !== refund.status;
    refund = next;
    document.querySelectorAll("[data-panel]").forEach(function (panel) {
      panel.hidden = panel.dataset.panel !== refund.status;
    });
    show("timer", refund.status === "awaiting_funds");
    Tender.setText("received_amount", refund.funding.received_amount);
    if (changed) {
      Tender.setText("announce", "Refund " + refund.status.replace("_", " ") + ".");
      var heading = document.querySelector('[data-panel="' + refund.status + '"] h1');
      if (heading) heading.focus();
    }
    tick();
  }

  function tick() {
    var left = Math.max(0, Date.parse(refund.funding.expires_at) - (Date.now() + skew));
    var minutes = Math.floor(left / 60000), seconds = Math.floor(left / 1000) % 60;
    Tender.setText("countdown", minutes + ":" + (seconds < 10 ? "0" : "") + seconds);
  }

  async function poll() {
    var result = await Tender.api("GET", "/v1/public/refunds/" + encodeURIComponent(refundId));
    if (result.ok) {
      Tender.showError("poll-error", null);
      render(result.data);
    } else if (!Tender.transient(result)) {
      Tender.showError("poll-error", result.error.message);
    }
    if (FINAL.indexOf(refund.status) < 0) setTimeout(poll, result.ok ? POLL_MS : ERROR_POLL_MS);
  }

  function copy(button) {
    var source = Tender.fields(button.dataset.copy)[0];
    if (!source || !navigator.clipboard) return;
    navigator.clipboard.writeText(source.textContent.trim()).then(function () {
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = "Copy"; }, 1500);
    });
  }

  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () { copy(button); });
  });
  tick();
  setInterval(tick, 1000);
  if (FINAL.indexOf(refund.status) < 0) poll();
})();
