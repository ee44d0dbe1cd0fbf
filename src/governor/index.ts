/** The partition governor: pure decisions between chunks (see decide.ts). */
export {
  afterBudget,
  afterChunk,
  afterLockTimeout,
  afterStatementTimeout,
  decide,
  timeoutFloor,
  initialGovernorState,
  type ChunkRecordDecision,
  type Decision,
  type GovernorInput,
  type GovernorState,
  type Step,
} from './decide';
export { FULL_PACE, MIN_PACE, nextChunkSize, nextPace, settledPace } from './pace';
