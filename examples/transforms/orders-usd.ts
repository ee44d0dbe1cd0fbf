/**
 * The demo's transform written in TypeScript: the same rows as orders-usd.yaml's SQL, with exact
 * decimal arithmetic (rates in millionths; rounding half away from zero, as PostgreSQL's round()).
 * A transform sees only its rows, never the database, so the rates are part of the code: change
 * one and bump `version` here and in the spec.
 */
import { defineTransform } from '@pgbackfill/backfill/transform';

/** USD per unit of each currency, in millionths (demo.fx_rates). */
const USD_RATE_MICROS: Record<string, bigint> = { USD: 1000000n, EUR: 1083200n, GBP: 1265000n, JPY: 6712n, CHF: 1127500n };

interface Order {
  id: string; // bigint arrives as a string: exact
  currency: string | null;
  amount_cents: string | null;
}

interface OrderUsd {
  id: string;
  currency: string | null;
  amount_usd: string | null; // numeric goes back as text: exact
}

export function toUsd(amountCents: string | null, currency: string | null): string | null {
  const rate = currency === null ? undefined : USD_RATE_MICROS[currency];
  if (rate === undefined || amountCents === null) return null;
  const product = BigInt(amountCents) * rate;
  const sign = product < 0n ? -1n : 1n;
  const cents = (sign * product + 500000n) / 1000000n; // half away from zero
  const whole = cents / 100n;
  const text = `${whole}.${(cents % 100n).toString().padStart(2, '0')}`;
  return sign < 0n && cents !== 0n ? `-${text}` : text;
}

export default defineTransform<Order, OrderUsd>({
  columns: ['id', 'currency', 'amount_usd'],
  reads: ['id', 'currency', 'amount_cents'],
  version: 2,
  transform(rows) {
    return rows.map((r) => ({ id: r.id, currency: r.currency, amount_usd: toUsd(r.amount_cents, r.currency) }));
  },
});
