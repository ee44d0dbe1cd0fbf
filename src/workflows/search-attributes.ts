/**
 * Custom search attributes of run workflows, registered on the dev server by
 * `backfill dev` and on other namespaces by `backfill start` when missing.
 * SQL visibility has 10 Keyword and 3 Int slots per namespace; these use 3 + 2.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const BackfillName = defineSearchAttributeKey('BackfillName', SearchAttributeType.KEYWORD);
export const BackfillRunId = defineSearchAttributeKey('BackfillRunId', SearchAttributeType.KEYWORD);
export const BackfillStatus = defineSearchAttributeKey('BackfillStatus', SearchAttributeType.KEYWORD);
export const BackfillPercent = defineSearchAttributeKey('BackfillPercent', SearchAttributeType.INT);
export const BackfillRowsWritten = defineSearchAttributeKey('BackfillRowsWritten', SearchAttributeType.INT);

export const SEARCH_ATTRIBUTES = [BackfillName, BackfillRunId, BackfillStatus, BackfillPercent, BackfillRowsWritten];
