/* Shared helpers of the hosted pages: JSON calls to the buyer routes, the asset picker, checks. */
"use strict";
var Tender = (function () {
  function fields(name) {
    return document.querySelectorAll('[data-field="' + name + '"]');
  }

  function setText(name, text) {
    fields(name).forEach(function (el) { el.textContent = text == null ? "" : text; });
  }

  function showError(name, message) {
    fields(name).forEach(function (el) { el.textContent = message || ""; el.hidden = !message; });
  }

  // Every call answers {ok, status, data} or {ok: false, status, error: {code, message, param}}.
  async function api(method, path, body) {
    var options = { method: method, headers: { "Accept": "application/json" }, credentials: "omit" };
    if (body !== undefined) {
      options.headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    var response;
    try {
      response = await fetch(path, options);
    } catch (e) {
      return { ok: false, status: 0, error: { message: "Network problem: check your connection and try again." } };
    }
    var data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    if (response.ok) return { ok: true, status: response.status, data: data };
    var error = data && data.error;
    if (!error || typeof error !== "object") {
      error = { message: (typeof error === "string" && error) || "Something went wrong (" + response.status + ")." };
    }
    if (response.status === 429) error.message = "Too many attempts; please wait a moment and try again.";
    return { ok: false, status: response.status, error: error,
             retryAfter: Number(response.headers.get("Retry-After")) || 0 };
  }

  function networkLabel(networks, network) {
    return networks[network] ? networks[network].label : String(network || "").toUpperCase();
  }

  function assetLabel(asset, networks) {
    return asset.symbol + " on " + networkLabel(networks, asset.network);
  }

  // Fills a <select> from GET /v1/public/assets; resolves to {code: asset}.
  async function loadAssets(select, networks) {
    var result = await api("GET", "/v1/public/assets");
    var byCode = {};
    select.textContent = "";
    if (!result.ok) {
      select.appendChild(new Option("Assets unavailable; reload to retry", ""));
      return byCode;
    }
    select.appendChild(new Option("Choose an asset…", ""));
    result.data.data.forEach(function (asset) {
      byCode[asset.code] = asset;
      select.appendChild(new Option(assetLabel(asset, networks), asset.code));
    });
    select.disabled = false;
    return byCode;
  }

  // A typo guard only: the provider decides what it accepts.
  function addressProblem(address, asset, networks) {
    if (!address) return "Enter a refund address.";
    var rule = networks[asset.network];
    if (rule && !new RegExp(rule.pattern).test(address)) {
      return "That does not look like an address on " + rule.label + ".";
    }
    return null;
  }

  function busy(button, text) {
    if (text) {
      button.dataset.label = button.textContent;
      button.textContent = text;
      button.disabled = true;
    } else {
      button.textContent = button.dataset.label || button.textContent;
      button.disabled = false;
    }
  }

  return { fields: fields, setText: setText, showError: showError, api: api, assetLabel: assetLabel,
           networkLabel: networkLabel, loadAssets: loadAssets, addressProblem: addressProblem, busy: busy };
})();
