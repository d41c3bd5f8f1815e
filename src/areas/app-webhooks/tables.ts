// Tables of this area; its migration is src/db/migrations/ for the area.
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface AppWebhookTables {}
