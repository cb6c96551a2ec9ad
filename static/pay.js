/* The payment-link page: amount (customer-defined links), asset and refund address, then checkout. */
"use strict";
(function () {
  var root = document.getElementById("pay");
  var form = document.getElementById("pay-form");
  if (!root || !form) return;
  var networks = JSON.parse(root.dataset.networks);
  var select = document.getElementById("asset");
  var refundInput = document.getElementById("refund-to");
  var emailInput = document.getElementById("customer-email");
  var amountInput = document.getElementById("amount");
  var submit = document.getElementById("pay-submit");
  var currency = root.dataset.currency;
  var assets = {};
  var AMOUNT = /^\d{1,12}(\.\d{1,2})?$/;

  // Amounts compared in cents as integers: no floating point for money.
  function cents(text) {
    var parts = text.split(".");
    return BigInt(parts[0]) * 100n + BigInt(((parts[1] || "") + "00").slice(0, 2));
  }

  function amountProblem(text) {
    var min = root.dataset.min, max = root.dataset.max;
    var range = min && max ? "between " + min + " and " + max + " " + currency
      : min ? "of at least " + min + " " + currency : max ? "of at most " + max + " " + currency : "";
    if (!text) return "Enter an amount" + (range ? " " + range : "") + ".";
    if (!AMOUNT.test(text) || cents(text) === 0n) return "Enter an amount like 25 or 25.50" + (range ? ", " + range : "") + ".";
    if ((min && cents(text) < cents(min)) || (max && cents(text) > cents(max))) {
      return "The amount must be " + range + ".";
    }
    return null;
  }

  Tender.loadAssets(select, networks).then(function (loaded) { assets = loaded; });
  select.addEventListener("change", function () {
    var asset = assets[select.value];
    Tender.setText("refund-network", asset ? "(" + Tender.networkLabel(networks, asset.network) + ")" : "");
  });
  if (amountInput) {
    amountInput.addEventListener("input", function () { Tender.showError("amount-error", null); });
  }

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    Tender.showError("pay-error", null);
    var body = {};
    if (amountInput) {
      var text = amountInput.value.trim();
      var problem = amountProblem(text);
      Tender.showError("amount-error", problem);
      amountInput.setAttribute("aria-invalid", problem ? "true" : "false");
      if (problem) { amountInput.focus(); return; }
      body.amount = text;
    }
    var asset = assets[select.value];
    if (!asset) { Tender.showError("pay-error", "Choose the asset you want to pay with."); select.focus(); return; }
    var address = refundInput.value.trim();
    var addressProblem = Tender.addressProblem(address, asset, networks);
    if (addressProblem) { Tender.showError("pay-error", addressProblem); refundInput.focus(); return; }
    body.origin_asset = asset.code;
    body.refund_to = address;
    var email = emailInput ? emailInput.value.trim() : "";
    if (email) body.customer_email = email;           // optional: where the receipt goes

    Tender.busy(submit, "Starting payment…");
    var result = await Tender.api("POST", "/v1/public/payment-links/" + encodeURIComponent(root.dataset.token) +
                                  "/checkout", body);
    if (result.ok) {
      // The checkout page shows the deposit instructions only with the refund address typed here.
      try { window.sessionStorage.setItem("tender.refund_to." + result.data.invoice_id, address); } catch (e) { /* none */ }
      window.location.assign(result.data.checkout_url);
      return;
    }
    Tender.busy(submit, null);
    // The server has the last word (limits may have changed since this page loaded).
    if (result.error.code === "amount_out_of_range" || result.error.param === "amount") {
      Tender.showError("amount-error", result.error.message);
      if (amountInput) { amountInput.setAttribute("aria-invalid", "true"); amountInput.focus(); }
    } else {
      Tender.showError("pay-error", result.error.message,
                       Tender.transient(result) ? function () { form.requestSubmit(); } : null);
    }
  });
})();
