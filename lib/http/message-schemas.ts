// The joi schemas of the messages' HTTP contract: the queue GETs' query and headers, the two
// POSTs' bodies, and the messages and acknowledgements they answer with. The same objects
// validate requests and build the Swagger document, so the docs cannot drift from the code.
import Joi from 'joi';
import { BatchDoorStatus, DestinationStatus, LightColor, LightStatus } from '../../model/enums';
import { FieldWidth, NoTrailingSpace, PrintableAscii } from '../telegram/fields';
import { DeliveryStates } from '../../model/messages';

/** A text field that travels to the sorter: printable ASCII, no trailing space, at most its telegram width. */
function telegramText(name: keyof typeof FieldWidth): Joi.StringSchema {
  return Joi.string()
    .max(FieldWidth[name])
    .pattern(PrintableAscii, { name: 'printable ASCII' })
    .pattern(NoTrailingSpace, { name: 'no trailing space' })
    .messages({
      'string.pattern.name': `{{#label}} must be {{#name}} (it travels in a fixed-width sorter telegram)`,
      'string.max': `{{#label}} must be at most {{#limit}} characters (the width of its sorter telegram field)`,
    });
}

const oneOf = (values: readonly string[]) => values.join(', ');

/** GET /sortation and /destination: how long to wait for a message. */
export const timeOutQuery = Joi.object({
  timeOut: Joi.number()
    .unsafe() // 1e25 is a number too: clamped like any other
    .error((errors) =>
      errors.map((e) => {
        // timeOut=1&timeOut=2 arrives as an array: say that, not "must be a number".
        if (e.code === 'number.base' && Array.isArray(e.value)) e.code = 'number.once';
        return e;
      }),
    )
    .messages({ 'number.once': '{{#label}} is given more than once: give it once' })
    .description(
      'Seconds to wait for a message. Any number is accepted, truncated to whole seconds and clamped to 0..30; 0 = immediate check. Omitted: the DefaultTimeOut setting (default 0).',
    )
    .example(10),
})
  .unknown(true)
  .label('TimeOutQuery');

/** The optional request headers of the queue GETs: acknowledging explicitly (docs/queue-semantics.md). */
export const ackHeaders = Joi.object({
  'x-ack-mode': Joi.string()
    .valid('explicit')
    .insensitive()
    .description(
      '"explicit": the message this GET returns leaves its queue only when you acknowledge it (X-Ack on a later GET or HEAD of this queue, or POST /sortation for a REQUEST\'s TrackID), or comes back after VisibilityTimeoutSeconds. The proof that holds through a proxy. Omitted: the connection proves the read.',
    ),
  'x-ack': Joi.string()
    .pattern(/^ *\d{1,15}( *, *\d{1,15}){0,99} *$/, { name: 'message ids' })
    .messages({ 'string.pattern.name': '{{#label}} must be message ids (X-Message-Id), comma-separated' })
    .description(
      'Message ids (X-Message-Id of earlier responses, comma-separated) that you have read and processed: they leave the queue. For messages taken with X-Ack-Mode explicit; HEAD acknowledges without taking a message.',
    )
    .example('17'),
})
  .unknown(true)
  .label('AckHeaders');

/** POST /sortation: the WCS's destination for an item. */
export const assignmentBody = Joi.object({
  TrackID: telegramText('TrackID').required().description('The item being answered (from the REQUEST). Required.').example('0004711'),
  Destination: telegramText('Destination').required().description('Destination identifier. Required.').example('D017'),
  Barcode: telegramText('Barcode')
    .allow('', null)
    .description(
      'Optional; sent to the sorter with the assignment. null (as .NET and Java serializers send for an unset property, e.g. on a no-read) means omitted.',
    )
    .example('4006381333931'),
  Type: Joi.string().allow('', null).description('Optional and ignored; normal integration omits it. null means omitted.'),
})
  .unknown(true)
  .label('AssignmentDto')
  .description('Field names match case-insensitively (trackId binds to TrackID); unknown fields are ignored.');

const enumInput = (values: readonly string[], fallback: string) =>
  Joi.any().description(`Case-insensitive, one of ${oneOf(values)}. Anything else (or omitted) becomes ${fallback}; not an error.`);

/** POST /destination: the setting of a destination (its status, text and light). */
export const destinationBody = Joi.object({
  Destination: telegramText('Destination').required().description('Destination identifier. Required.').example('D017'),
  DestinationStatus: enumInput(DestinationStatus, 'NotReady').example('Ready'),
  DestinationText: telegramText('DestinationText')
    .allow('', null)
    .description('Display text; "" (or omitted) clears it.')
    .example('Tour 4711'),
  LightStatus: enumInput(LightStatus, 'Off').example('Solid'),
  LightColor: enumInput(LightColor, 'Off').example('BLUE'),
  BatchDoorStatus: Joi.any()
    .description(`Case-insensitive, one of ${oneOf(BatchDoorStatus)}; omitted or unparsable means not applicable (null).`)
    .example('OPENED'),
  Type: Joi.any().description('Optional and ignored.'),
})
  .unknown(true)
  .label('DestinationSetDto')
  .description('Field names match case-insensitively; unknown fields are ignored.');

// ---- responses (documentation) ----

/** A REQUEST as GET /sortation returns it. */
export const inductDto = Joi.object({
  Type: Joi.string().valid('REQUEST').required(),
  TrackID: Joi.string().required().example('0004711'),
  Barcode: Joi.string().allow('').required().example('4006381333931'),
  MessageCode: Joi.number().integer().required().example(210),
  InductLocation: Joi.string().required().example('IND01'),
  RecirculationCount: Joi.number().integer().required().example(0),
  Length: Joi.number().required().example(320.5),
  Width: Joi.number().required().example(210),
  Height: Joi.number().required().example(95),
  Weight: Joi.number().required().example(1.25),
}).label('InductDto');

/** A VERIFY as GET /sortation returns it. */
export const verifyDto = Joi.object({
  Type: Joi.string().valid('VERIFY').required(),
  TrackID: Joi.string().required().example('0004711'),
  Barcode: Joi.string().allow('').required().example('4006381333931'),
  Destination: Joi.string().required().example('D017'),
  MessageCode: Joi.number().integer().required().example(212),
}).label('VerifyDto');

/** A SCAN as GET /destination returns it. */
export const destinationInfoDto = Joi.object({
  Type: Joi.string().valid('SCAN').required(),
  Destination: Joi.string().required().example('D017'),
  DestinationStatus: Joi.string()
    .valid(...DestinationStatus)
    .required(),
  DestinationText: Joi.string().allow('').required().example(''),
  LightStatus: Joi.string()
    .valid(...LightStatus)
    .required(),
  LightColor: Joi.string()
    .valid(...LightColor)
    .required(),
  ButtonID: Joi.number().integer().required().description('0 = no button (NONE in replay files)').example(0),
  MessageCode: Joi.number().integer().required().example(211),
  BatchDoorStatus: Joi.string()
    .valid(...BatchDoorStatus)
    .allow(null)
    .required()
    .description('null when not applicable'),
}).label('DestinationInfoDto');

const defaultApplied = Joi.object({
  Field: Joi.string().required().example('LightColor'),
  Received: Joi.any()
    .meta({ anyJson: true }) // documented without a type: lib/http/openapi.ts
    .required()
    .description('The value as sent (any JSON value; null when the field was omitted)')
    .example('purple'),
  Applied: Joi.string().allow(null).required().example('Off'),
}).label('DefaultApplied');

const ack = (label: string, message: Joi.ObjectSchema) =>
  Joi.object({
    Accepted: Joi.boolean().valid(true).required(),
    Delivery: Joi.string()
      .valid(...DeliveryStates)
      .required()
      .description('Sent: written to the sorter. Queued: in the outbox until the sorter link is back. NotSent: test mode.'),
    OutboxID: Joi.number().integer().allow(null).required().description('Row id in the outbox table (null in test mode)'),
    Message: message.required(),
    DefaultsApplied: Joi.array().items(defaultApplied).required().description('Fields that did not parse and took the default'),
  }).label(label);

/** POST /sortation: what was accepted and how it travels to the sorter. */
export const assignmentAck = ack(
  'AssignmentAck',
  Joi.object({ TrackID: Joi.string().required(), Destination: Joi.string().required(), Barcode: Joi.string().allow('').required() }).label(
    'Assignment',
  ),
);

/** POST /destination: what was accepted and how it travels to the sorter. */
export const destinationAck = ack(
  'DestinationSetAck',
  Joi.object({
    Destination: Joi.string().required(),
    DestinationStatus: Joi.string()
      .valid(...DestinationStatus)
      .required(),
    DestinationText: Joi.string().allow('').required(),
    LightStatus: Joi.string()
      .valid(...LightStatus)
      .required(),
    LightColor: Joi.string()
      .valid(...LightColor)
      .required(),
    BatchDoorStatus: Joi.string()
      .valid(...BatchDoorStatus)
      .allow(null)
      .required(),
  }).label('DestinationSetting'),
);
