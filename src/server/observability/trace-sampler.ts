// OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, from the configuration (so from a configuration file too),
// turned into the sampler handed to the tracer provider: the specification's names, the ones the SDK itself
// reads from the process environment (docs/observability.md#tracing). Empty is the SDK's default, parent-based
// always-on, which follows a caller's sampled flag. A name or ratio the SDK would refuse falls back as the SDK
// does, with a warning.
import type { Sampler } from '@opentelemetry/sdk-trace-base';
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';

type Sdk = typeof import('@opentelemetry/sdk-trace-base');

export function traceSampler(sdk: Sdk, tracing: Pick<Config['tracing'], 'sampler' | 'samplerArg'>, log?: Logger): Sampler {
  const ratio = () => samplerRatio(tracing.samplerArg, log);
  const parentBased = (root: Sampler) => new sdk.ParentBasedSampler({ root });
  switch (tracing.sampler) {
    case '':
    case 'parentbased_always_on':
      return parentBased(new sdk.AlwaysOnSampler());
    case 'always_on':
      return new sdk.AlwaysOnSampler();
    case 'always_off':
      return new sdk.AlwaysOffSampler();
    case 'parentbased_always_off':
      return parentBased(new sdk.AlwaysOffSampler());
    case 'traceidratio':
      return new sdk.TraceIdRatioBasedSampler(ratio());
    case 'parentbased_traceidratio':
      return parentBased(new sdk.TraceIdRatioBasedSampler(ratio()));
    default:
      log?.warn({ sampler: tracing.sampler }, 'OTEL_TRACES_SAMPLER names no sampler this SDK has; using parentbased_always_on');
      return parentBased(new sdk.AlwaysOnSampler());
  }
}

/** The ratio of a ratio sampler: a number from 0 to 1; missing or other, 1, as the SDK reads it. */
function samplerRatio(text: string, log?: Logger): number {
  const ratio = text.trim() === '' ? NaN : Number(text);
  if (ratio >= 0 && ratio <= 1) return ratio;
  log?.warn({ arg: text }, 'OTEL_TRACES_SAMPLER_ARG is no ratio from 0 to 1; sampling every trace');
  return 1;
}
