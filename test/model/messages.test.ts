// The message model checked across its forms: the TypeScript DTOs (model/messages.ts), the joi
// schemas that validate and document them (lib/http/message-schemas.ts), the telegram layouts that carry
// them (bench/v1-codec.ts) and the queue tables that store them (db/queue-rows.ts, db/queue-reads.ts). Adding a field
// in one place and not the others fails here.
import type Joi from 'joi';
import type { Assignment, DestinationInfoDto, DestinationSetting, InductDto, VerifyDto } from '../../model/messages';
import { assignmentAck, destinationAck, destinationInfoDto, inductDto, verifyDto } from '../../lib/http/message-schemas';
import { Layouts, encodeData, outboundData, sorterMessageData, sorterMessageOf } from '../../bench/v1-codec';
import { createQueueStore } from '../../db/queue-store';
import { freshDb } from '../helpers/db';

const keysOf = (schema: Joi.ObjectSchema) => Object.keys(schema.describe().keys ?? {}).sort();
const layout = (type: keyof typeof Layouts) => Layouts[type].map((f) => f.name).sort();
const nested = (schema: Joi.ObjectSchema, key: string) => Object.keys(schema.describe().keys?.[key]?.keys ?? {}).sort();

// One complete example of each type: the compiler checks it has every field of its type.
const request: InductDto = {
  Type: 'REQUEST',
  TrackID: '0004711',
  Barcode: 'B',
  MessageCode: 210,
  InductLocation: 'IND01',
  RecirculationCount: 1,
  Length: 1.5,
  Width: 2,
  Height: 3,
  Weight: 4.25,
};
const verify: VerifyDto = { Type: 'VERIFY', TrackID: '0004711', Barcode: 'B', Destination: 'D1', MessageCode: 212 };
const scan: DestinationInfoDto = {
  Type: 'SCAN',
  Destination: 'D1',
  DestinationStatus: 'Ready',
  DestinationText: 'T',
  LightStatus: 'Solid',
  LightColor: 'BLUE',
  ButtonID: 3,
  MessageCode: 211,
  BatchDoorStatus: 'OPENED',
};
const assignment: Assignment = { TrackID: '0004711', Destination: 'D1', Barcode: 'B' };
const setting: DestinationSetting = {
  Destination: 'D1',
  DestinationStatus: 'NotReady',
  DestinationText: 'T',
  LightStatus: 'Off',
  LightColor: 'Off',
  BatchDoorStatus: null,
};

describe('the message model', () => {
  it('the joi schemas document exactly the fields of the DTOs', () => {
    expect(keysOf(inductDto)).toEqual(Object.keys(request).sort());
    expect(keysOf(verifyDto)).toEqual(Object.keys(verify).sort());
    expect(keysOf(destinationInfoDto)).toEqual(Object.keys(scan).sort());
    expect(nested(assignmentAck, 'Message')).toEqual(Object.keys(assignment).sort());
    expect(nested(destinationAck, 'Message')).toEqual(Object.keys(setting).sort());
  });

  it('the telegram layouts carry exactly the fields of the DTOs (Type is the telegram type)', () => {
    const withoutType = (m: object) =>
      Object.keys(m)
        .filter((k) => k !== 'Type')
        .sort();
    expect(layout('REQU')).toEqual(withoutType(request));
    expect(layout('VERI')).toEqual(withoutType(verify));
    expect(layout('SCAN')).toEqual(withoutType(scan));
    expect(layout('ASGN')).toEqual(Object.keys(assignment).sort());
    expect(layout('DSET')).toEqual(Object.keys(setting).sort());
  });

  it('every message survives the telegram and the queue table unchanged', () => {
    for (const m of [request, verify, scan]) {
      const { type, data } = sorterMessageData(m);
      expect(sorterMessageOf({ sender: 'PLC01', receiver: 'WCS01', seq: 1, type, flag: 'D', data })).toEqual(m);
    }
    expect(outboundData({ kind: 'ASSIGNMENT', body: assignment }).data).toBe(encodeData('ASGN', assignment));
    const ctx = freshDb();
    const store = createQueueStore(ctx.db);
    store.enqueue([request, verify, scan], '2026-11-22T00:00:00.000Z');
    expect(store.head('sortation', [])?.message).toEqual(request);
    expect(store.head('destination', [])?.message).toEqual(scan);
    ctx.dispose();
  });
});
