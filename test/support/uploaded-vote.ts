/**
 * A validator's preferences file as the subnet's uploader writes it (`json.dumps(indent=4)` of
 * its models: `keyword` first, non-ASCII escaped), with what its users type and our submission
 * rules would refuse: a youtube job, an X label without `#`, dates in Python's forms, platform
 * `X` (written by hand: the uploader lower-cases it), and weights summing to 0.3, which the
 * subnet takes as they are. Read by the unit spec of the reader and by the e2e of the network's
 * aggregate.
 */
export const UPLOADED_VOTE = `[
    {
        "id": "cafe",
        "weight": 0.1,
        "params": {
            "keyword": null,
            "platform": "x",
            "label": "#caf\\u00e9",
            "post_start_datetime": "2025-03-01T00",
            "post_end_datetime": "2025-04-01T00:00:00+00:00"
        }
    },
    {
        "id": "yt",
        "weight": 0.1,
        "params": {
            "keyword": null,
            "platform": "youtube",
            "label": "@bittensor",
            "post_start_datetime": null,
            "post_end_datetime": null
        }
    },
    {
        "id": "btc",
        "weight": 0.05,
        "params": {
            "keyword": "etf",
            "platform": "x",
            "label": "bitcoin",
            "post_start_datetime": null,
            "post_end_datetime": null
        }
    },
    {
        "id": "upper",
        "weight": 0.05,
        "params": {
            "keyword": null,
            "platform": "X",
            "label": "#tao",
            "post_start_datetime": null,
            "post_end_datetime": null
        }
    }
]`;

/**
 * A job's params as the subnet's uploader writes them: every field (its reader skips a job without
 * one).
 */
export const uploadedParams = (platform: string, label: string) => ({
  keyword: null,
  platform,
  label,
  post_start_datetime: null,
  post_end_datetime: null,
});
