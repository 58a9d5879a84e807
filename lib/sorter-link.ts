/** What GET /status shows of the link to the sorter. */
export interface SorterLinkStatus {
  Connected: boolean;
  Address: string | null;
  Since: string | null;
  LastTelegramIn: string | null;
  LastTelegramOut: string | null;
}

/** How a POSTed message travels on: written to the sorter, waiting in the outbox, or not at all (test mode). */
export type DeliveryState = 'Sent' | 'Queued' | 'NotSent';

/** The service's side of the link to the sorter, as the handlers see it. */
export interface SorterLink {
  status(): SorterLinkStatus;
  /** A new outbox entry is committed: send what the link can now. Says how that entry travels. */
  offer(outboxId: number): DeliveryState;
  stop(): Promise<void>;
}

/**
 * The link before any connection exists: the outbox keeps everything until a sorter
 * connection takes it (docs/sorter-protocol.md).
 */
export function offlineLink(address: string | null): SorterLink {
  return {
    status: () => ({ Connected: false, Address: address, Since: null, LastTelegramIn: null, LastTelegramOut: null }),
    offer: () => 'Queued',
    stop: async () => {},
  };
}
