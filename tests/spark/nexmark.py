"""Nexmark's bid stream as its SQL queries declare it, over a file of generated events (differential/nexmark_events.py).

The Nexmark query tests read the same `datagen` table and `bid` view Nexmark's ddl.sql declares; `{path}` is the
events file.
"""

BID_DDL = """
CREATE TEMPORARY TABLE datagen (
    event_type INT,
    bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, `dateTime` TIMESTAMP(3),
            extra VARCHAR>,
    `dateTime` AS bid.`dateTime`,
    WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'json');

CREATE TEMPORARY VIEW bid AS
SELECT bid.auction, bid.bidder, bid.price, bid.channel, bid.url, `dateTime`, bid.extra
FROM datagen WHERE event_type = 2;
"""
