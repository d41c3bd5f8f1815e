// Tables of the platform's shared state: rate limit counters and settings.

/** Request counters of the rate limits, shared by every process. Times in epoch seconds. */
export interface RateLimitsTable {
  key: string;
  window_start: number;
  used: number;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface PlatformTables {
  rate_limits: RateLimitsTable;
  settings: SettingsTable;
}
