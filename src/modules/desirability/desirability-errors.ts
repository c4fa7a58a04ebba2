import { withUnprintablesEscaped } from '../../common/validation/control-characters';

/**
 * The texts of the module's refusals, shared by the services that throw them and the controller
 * that documents them, so the documented examples are what clients get.
 */

/**
 * 404: the hotkey has no submission; a network answer adds why after a colon. The query's hotkey
 * is an SS58 address (HotkeyAddress); its control and format characters, which no address
 * holds, are still written as escapes, as a task id's are (quoted-id.ts), whoever calls this.
 */
export const noSubmission = (hotkey: string) =>
  `No desirabilities submitted by hotkey ${withUnprintablesEscaped(hotkey)}`;

/** 503 before the network's aggregate was first computed; the last failure follows a colon. */
export const AGGREGATE_NOT_COMPUTED =
  "The network's desirability aggregate has not been computed yet";

export const AGGREGATE_PENDING = `${AGGREGATE_NOT_COMPUTED} (its first read from the chain and the Gravity repository is pending)`;
