// The response shapes of assistant metrics: the day record, exactly as the spec's schema, and the
// operator's day (a day record with its date). Every count defaults to 0, every list to [], every
// feature block to an empty one, so an operator may send only what a day had; the public answer
// always carries every field.
import { Type, type Static, type TSchema } from 'typebox';

const Count = Type.Integer({ minimum: 0, default: 0 });
const List = <T extends TSchema>(item: T) => Type.Array(item, { default: [] });
const Block = <T extends Parameters<typeof Type.Object>[0]>(properties: T) => Type.Object(properties, { default: {} });

const Model = {
  name: Type.String(),
  is_custom_model: Type.Boolean({ default: false }),
  custom_model_training_date: Type.Union([Type.String(), Type.Null()], { default: null }),
};

const CodeCompletionLanguage = Type.Object({
  name: Type.String(),
  total_engaged_users: Count,
  total_code_suggestions: Count,
  total_code_acceptances: Count,
  total_code_lines_suggested: Count,
  total_code_lines_accepted: Count,
});

const IdeCodeCompletions = Block({
  total_engaged_users: Count,
  languages: List(Type.Object({ name: Type.String(), total_engaged_users: Count })),
  editors: List(Type.Object({
    name: Type.String(),
    total_engaged_users: Count,
    models: List(Type.Object({ ...Model, total_engaged_users: Count, languages: List(CodeCompletionLanguage) })),
  })),
});

const IdeChat = Block({
  total_engaged_users: Count,
  editors: List(Type.Object({
    name: Type.String(),
    total_engaged_users: Count,
    models: List(Type.Object({
      ...Model,
      total_engaged_users: Count,
      total_chats: Count,
      total_chat_insertion_events: Count,
      total_chat_copy_events: Count,
    })),
  })),
});

const DotcomChat = Block({
  total_engaged_users: Count,
  models: List(Type.Object({ ...Model, total_engaged_users: Count, total_chats: Count })),
});

const DotcomPullRequests = Block({
  total_engaged_users: Count,
  repositories: List(Type.Object({
    name: Type.String(),
    total_engaged_users: Count,
    models: List(Type.Object({ ...Model, total_pr_summaries_created: Count, total_engaged_users: Count })),
  })),
});

export const DATE_PATTERN = '^\\d{4}-\\d{2}-\\d{2}$';

export const DayRecord = Type.Object({
  date: Type.String({ pattern: DATE_PATTERN, description: 'The calendar day (UTC), YYYY-MM-DD' }),
  total_active_users: Count,
  total_engaged_users: Count,
  assistant_ide_code_completions: IdeCodeCompletions,
  assistant_ide_chat: IdeChat,
  assistant_dotcom_chat: DotcomChat,
  assistant_dotcom_pull_requests: DotcomPullRequests,
});
export type DayRecord = Static<typeof DayRecord>;

/** A day as the operator sets it: the record, the licensed members at its end, and the team it is for (none: the organization). */
export const OperatorDay = Type.Object({
  ...DayRecord.properties,
  licensed_members: Type.Integer({ minimum: 0, description: 'Members with an active assistant license at the end of the day' }),
  team: Type.Optional(Type.String({ description: "A team's slug: the day belongs to that team's metrics" })),
});
export type OperatorDay = Static<typeof OperatorDay>;
