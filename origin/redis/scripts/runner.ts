/**
 * Runs script modules on one client: the scripts registered there once (EVALSHA, EVAL on NOSCRIPT),
 * then `run(script, keys, input)` lays out KEYS and ARGV from the module and decodes the reply with
 * its decoder. `queue` puts one call on an explicit pipeline (WAIT behind a reservation, benchmarks).
 */
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '../client.js';
import type { ActivityKeys } from '../keys.js';
import { defineScripts, readScripts, type LuaScript, type ScriptCommands } from './load.js';
import type { Reply, Script } from './script.js';

export class ScriptRunner {
  private readonly commands: ScriptCommands;

  constructor(
    readonly redis: RedisClient,
    private readonly lua: Map<string, LuaScript> = readScripts(),
  ) {
    this.commands = defineScripts(redis, lua);
  }

  /** One script on the bucket whose keys are `k`, its reply decoded. */
  async run<Input, Result>(script: Script<Input, Result>, k: ActivityKeys, input: Input): Promise<Result> {
    return script.decode(await this.commands[script.name](script.keys(k), script.args(input)));
  }

  /**
   * Adds one EVALSHA of the script to `pipeline` (after a SCRIPT LOAD when `loadFirst`: a server that
   * lost its script cache). Its reply, once the pipeline ran, goes through `script.decode`.
   */
  queue<Input>(
    pipeline: ChainableCommander,
    script: Script<Input, unknown>,
    k: ActivityKeys,
    input: Input,
    { loadFirst = false }: { loadFirst?: boolean } = {},
  ): ChainableCommander {
    const lua = this.lua.get(script.name)!;
    if (loadFirst) pipeline.script('LOAD', lua.source);
    const keys = script.keys(k);
    return pipeline.evalsha(lua.sha, keys.length, ...keys, ...script.args(input));
  }

  /** The script's source (to load it on every node before a benchmark's pipelines). */
  source(script: Script<unknown, unknown>): string {
    return this.lua.get(script.name)!.source;
  }
}

export type { Reply };
