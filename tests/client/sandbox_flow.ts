// A client generated from /v1/openapi.json (openapi-typescript types + openapi-fetch) drives the
// sandbox flow: create an invoice, the buyer commits a quote, a simulated deposit, then polling until
// the payout is settled. `tsc --strict` type-checks it against the generated types first, so a
// document that generators read differently from the API fails here.
// Usage: node sandbox_flow.js BASE_URL API_KEY; prints one JSON line with what it saw.
import createClient from "openapi-fetch";
import type { paths } from "./tender.js";

const [baseUrl, apiKey] = process.argv.slice(2);
const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });

function must<T>(result: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (result.data === undefined) {
    throw new Error(`${what}: HTTP ${result.response.status} ${JSON.stringify(result.error)}`);
  }
  return result.data;
}

async function main(): Promise<void> {
  const created = must(await client.POST("/v1/invoices", {
    body: { amount: "25.00", currency: "USD", external_order_id: "generated-client-1" },
  }), "create invoice");
  const path = { params: { path: { invoice_id: created.id } } };

  const quoted = must(await client.POST("/v1/public/invoices/{invoice_id}/quote", {
    ...path, body: { origin_asset: "usdc.eth", refund_to: "0x1111111111111111111111111111111111111111", dry: false },
  }), "commit a quote");
  must(await client.POST("/v1/test_helpers/invoices/{invoice_id}/pay", { ...path, body: { outcome: "success" } }),
       "simulate the deposit");

  const deadline = Date.now() + 60_000;     // the worker and the scheduler move it: poll, with a deadline
  let status = must(await client.GET("/v1/invoices/{invoice_id}/status", path), "status");
  while (!(status.status === "paid" && status.swap_status === null) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    status = must(await client.GET("/v1/invoices/{invoice_id}/status", path), "status");
  }
  const transactions = must(await client.GET("/v1/invoices/{invoice_id}/transactions", path), "transactions");
  console.log(JSON.stringify({
    id: created.id, quoted_status: quoted.invoice.status, status: status.status, swap_status: status.swap_status ?? null,
    received_amount: status.received_amount, transaction_types: transactions.data.map((t) => t.type).sort(),
  }));
}

main().catch((error: unknown) => { console.error(error); process.exit(1); });
