/* Shared helpers of the hosted pages: JSON calls to the buyer routes, the asset picker, checks. */
"use strict";
var Tender = (function () {
  function fields(name) {
    return document.querySelectorAll('[data-field="' + name + '"]');
  }

  function setText(name, text) {
    fields(name).forEach(function (el) { el.textContent = text == null ? "" : text; });
  }

  // A message in the error box `name` (hidden when there is none); with `retry`, a "Try again"
  // button after it that clears the message and calls retry(): no failed call leaves a blank.
  function showError(name, message, retry) {
    fields(name).forEach(function (el) {
      el.textContent = message || "";
      el.hidden = !message;
      if (!message || !retry) return;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "retry";
      button.textContent = "Try again";
      button.addEventListener("click", function () { showError(name, null); retry(); });
      el.appendChild(document.createTextNode(" "));
      el.appendChild(button);
    });
  }

  // Worth repeating as it is: the connection, a busy server, or a moment's outage.
  function transient(result) {
    return !result.ok && (result.status === 0 || result.status === 429 || result.status >= 500);
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
      return { ok: false, status: 0, error: { message: "Network problem: check your connection." } };
    }
    var data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    if (response.ok) return { ok: true, status: response.status, data: data };
    var error = data && data.error;
    if (!error || typeof error !== "object") {
      error = { message: (typeof error === "string" && error) || "Something went wrong (" + response.status + ")." };
    }
    // Short human words for what the buyer cannot fix; a 4xx keeps the server's own message.
    var retryAfter = Number(response.headers.get("Retry-After")) || 0;
    if (response.status === 429) {
      error.message = "Too many attempts; please try again " +
        (retryAfter ? "in " + retryAfter + (retryAfter === 1 ? " second." : " seconds.") : "in a moment.");
    } else if (response.status === 503) error.message = "Payments are briefly unavailable; please try again in a moment.";
    else if (response.status >= 500) error.message = "Something went wrong on our side; please try again.";
    return { ok: false, status: response.status, error: error,
             retryAfter: retryAfter };
  }

  function networkLabel(networks, network) {
    return networks[network] ? networks[network].label : String(network || "").toUpperCase();
  }

  function assetLabel(asset, networks) {
    return asset.symbol + " on " + networkLabel(networks, asset.network);
  }

  // Fills a <select> from GET /v1/public/assets; resolves to {code: asset} once loaded. A failure
  // shows its message in the "assets-error" box with a "Try again" that asks once more.
  function loadAssets(select, networks) {
    return new Promise(function (resolve) {
      async function attempt() {
        var result = await api("GET", "/v1/public/assets");
        var byCode = {};
        select.textContent = "";
        if (!result.ok) {
          select.appendChild(new Option("Assets unavailable", ""));
          showError("assets-error", "We could not load the assets you can pay with. " + result.error.message, attempt);
          return;
        }
        select.appendChild(new Option("Choose an asset…", ""));
        result.data.data.forEach(function (asset) {
          byCode[asset.code] = asset;
          select.appendChild(new Option(assetLabel(asset, networks), asset.code));
        });
        select.disabled = false;
        resolve(byCode);
      }
      attempt();
    });
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

  // An address as the buyer views show it: the first six and last four characters (core/networks.py,
  // `shortened`, is the same rule), so what this browser typed can be compared with it.
  function shortened(address) {
    if (!address || address.length <= 11) return address;
    return address.slice(0, 6) + "\u2026" + address.slice(-4);
  }

  return { fields: fields, setText: setText, showError: showError, transient: transient, api: api, assetLabel: assetLabel,
           networkLabel: networkLabel, loadAssets: loadAssets, addressProblem: addressProblem, busy: busy,
           shortened: shortened };
})();
