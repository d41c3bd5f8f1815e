// Column conventions on both databases: integer ids, booleans as 0/1 integers, timestamps as
// ISO-8601 text with milliseconds (sortable), JSON as text.

export type Bool = number;
