// A piscina task that does nothing: bench/crypto-choices.mjs times the pool's own round trip with it.
export default function noop(value) {
  return value;
}
