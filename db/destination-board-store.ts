// The destinations board: the latest state of every destination (migrations/013), one row each,
// written beside the SCAN that reported it or the outbox entry that set it.
import type { Db } from './connection';
import type { DestinationInfoDto, DestinationSetting } from '../model/messages';
import { merged } from '../lib/host/merged';

/** What the sorter's SCANs say of the WCS's last setting: none yet, the same, or another state. */
export type Agreement = 'Pending' | 'Agrees' | 'Disagrees';

/** One destination's tile. */
export interface DestinationTile {
  Destination: string;
  DestinationStatus: string;
  DestinationText: string;
  LightStatus: string;
  LightColor: string;
  BatchDoorStatus: string | null;
  /** The button of the sorter's last SCAN; null until one came. */
  ButtonID: number | null;
  /** When what it shows last changed, and who changed it: 'sorter' or the WCS client's address. */
  ChangedAt: string;
  ChangedBy: string;
  /** What the WCS last set, if it ever did, and what the sorter's SCANs since say of it. */
  Wcs: {
    DestinationStatus: string;
    DestinationText: string;
    LightStatus: string;
    LightColor: string;
    BatchDoorStatus: string | null;
    SetAt: string;
    Agreement: Agreement;
  } | null;
}

/** Reading the board (main thread). */
export interface DestinationBoardReads {
  /** Every destination, by name. */
  board(): DestinationTile[];
}

/** Writing it (writer thread, inside the transaction of the SCAN's or the setting's own write). */
export interface DestinationBoardWrites {
  /** The sorter reported a destination (SCAN). */
  scanned(scan: DestinationInfoDto, at: string): void;
  /** The WCS set a destination (POST /destination), from `clientAddress`. */
  set(setting: DestinationSetting, clientAddress: string | null, at: string): void;
}

interface BoardRow {
  destination: string;
  destination_status: string;
  destination_text: string;
  light_status: string;
  light_color: string;
  batch_door_status: string | null;
  button_id: number | null;
  changed_at: string;
  changed_by: string;
  wcs_status: string | null;
  wcs_text: string | null;
  wcs_light_status: string | null;
  wcs_light_color: string | null;
  wcs_batch_door: string | null;
  wcs_set_at: string | null;
  agreement: Agreement | null;
}

const toTile = (r: BoardRow): DestinationTile => ({
  Destination: r.destination,
  DestinationStatus: r.destination_status,
  DestinationText: r.destination_text,
  LightStatus: r.light_status,
  LightColor: r.light_color,
  BatchDoorStatus: r.batch_door_status,
  ButtonID: r.button_id,
  ChangedAt: r.changed_at,
  ChangedBy: r.changed_by,
  // A WCS setting is written whole (all its columns or none): one missing is no setting.
  Wcs:
    r.wcs_set_at === null || r.wcs_status === null || r.wcs_text === null || r.wcs_light_status === null || r.wcs_light_color === null
      ? null
      : {
          DestinationStatus: r.wcs_status,
          DestinationText: r.wcs_text,
          LightStatus: r.wcs_light_status,
          LightColor: r.wcs_light_color,
          BatchDoorStatus: r.wcs_batch_door,
          SetAt: r.wcs_set_at,
          Agreement: r.agreement ?? 'Pending',
        },
});

/** The board's reads on an open, migrated database. */
export function destinationBoardReads(db: Db): DestinationBoardReads {
  const all = db.prepare('SELECT * FROM destination_board ORDER BY destination');
  return { board: () => (all.all() as BoardRow[]).map(toTile) };
}

// What a tile shows, compared with `IS NOT` so that a NULL batch door compares as a value.
const SHOWN_DIFFERS = `destination_status IS NOT excluded.destination_status OR destination_text IS NOT excluded.destination_text
  OR light_status IS NOT excluded.light_status OR light_color IS NOT excluded.light_color OR batch_door_status IS NOT excluded.batch_door_status`;
const SCAN_DIFFERS_FROM_WCS = `wcs_status IS NOT excluded.destination_status OR wcs_text IS NOT excluded.destination_text
  OR wcs_light_status IS NOT excluded.light_status OR wcs_light_color IS NOT excluded.light_color OR wcs_batch_door IS NOT excluded.batch_door_status`;

/** The columns a SCAN and a WCS setting both carry, for the statements' named parameters. */
const lampColumns = (s: DestinationInfoDto | DestinationSetting) => ({
  destination: s.Destination,
  destination_status: s.DestinationStatus,
  destination_text: s.DestinationText,
  light_status: s.LightStatus,
  light_color: s.LightColor,
  batch_door_status: s.BatchDoorStatus,
});

/**
 * The board's writes on an open, migrated database. Each is one upsert that changes the row only
 * when something on it changes: a SCAN repeating what the board shows writes no page.
 */
export function destinationBoardWrites(db: Db): DestinationBoardWrites {
  // changed_at/by move only when what the tile shows changes; a SCAN after a WCS setting judges it
  // (agreement), and once one agreed, later SCANs are the sorter's own and leave it so.
  const scan = db.prepare(`
    INSERT INTO destination_board (destination, destination_status, destination_text, light_status, light_color,
      batch_door_status, button_id, changed_at, changed_by)
    VALUES (@destination, @destination_status, @destination_text, @light_status, @light_color,
      @batch_door_status, @button_id, @at, 'sorter')
    ON CONFLICT (destination) DO UPDATE SET
      destination_status = excluded.destination_status, destination_text = excluded.destination_text,
      light_status = excluded.light_status, light_color = excluded.light_color, batch_door_status = excluded.batch_door_status,
      button_id = excluded.button_id,
      changed_at = CASE WHEN ${SHOWN_DIFFERS} OR button_id IS NOT excluded.button_id THEN excluded.changed_at ELSE changed_at END,
      changed_by = CASE WHEN ${SHOWN_DIFFERS} OR button_id IS NOT excluded.button_id THEN 'sorter' ELSE changed_by END,
      agreement = CASE WHEN agreement IS NULL OR agreement = 'Agrees' THEN agreement
        WHEN ${SCAN_DIFFERS_FROM_WCS} THEN 'Disagrees' ELSE 'Agrees' END
    WHERE ${SHOWN_DIFFERS} OR button_id IS NOT excluded.button_id OR agreement IN ('Pending', 'Disagrees')`);
  const set = db.prepare(`
    INSERT INTO destination_board (destination, destination_status, destination_text, light_status, light_color,
      batch_door_status, changed_at, changed_by, wcs_status, wcs_text, wcs_light_status, wcs_light_color, wcs_batch_door, wcs_set_at, agreement)
    VALUES (@destination, @destination_status, @destination_text, @light_status, @light_color,
      @batch_door_status, @at, @by, @destination_status, @destination_text, @light_status, @light_color, @batch_door_status, @at, 'Pending')
    ON CONFLICT (destination) DO UPDATE SET
      destination_status = excluded.destination_status, destination_text = excluded.destination_text,
      light_status = excluded.light_status, light_color = excluded.light_color, batch_door_status = excluded.batch_door_status,
      changed_at = excluded.changed_at, changed_by = excluded.changed_by,
      wcs_status = excluded.wcs_status, wcs_text = excluded.wcs_text, wcs_light_status = excluded.wcs_light_status,
      wcs_light_color = excluded.wcs_light_color, wcs_batch_door = excluded.wcs_batch_door, wcs_set_at = excluded.wcs_set_at,
      agreement = 'Pending'`);
  return {
    scanned(s, at) {
      scan.run(merged(lampColumns(s), { button_id: s.ButtonID, at }));
    },
    set(s, clientAddress, at) {
      set.run(merged(lampColumns(s), { by: clientAddress ?? 'WCS', at }));
    },
  };
}

/** Both, on one connection (tests, tools). */
export function createDestinationBoardStore(db: Db): DestinationBoardReads & DestinationBoardWrites {
  return { ...destinationBoardReads(db), ...destinationBoardWrites(db) };
}
