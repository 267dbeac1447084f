CREATE TABLE bid (
  auction BIGINT,
  bidder BIGINT,
  price BIGINT,
  channel STRING,
  url STRING,
  `dateTime` TIMESTAMP(3),
  extra STRING,
  WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = '${data}/bid.json',
  'format' = 'json'
);

-- Nexmark q5, hot items: the auctions with the most bids in each 10-second window sliding by 2 seconds.
SELECT AuctionBids.auction, AuctionBids.num
FROM (
  SELECT auction, count(*) AS num, window_start AS starttime, window_end AS endtime
  FROM TABLE(HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
  GROUP BY auction, window_start, window_end
) AS AuctionBids
JOIN (
  SELECT max(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime
  FROM (
    SELECT count(*) AS num, window_start AS starttime, window_end AS endtime
    FROM TABLE(HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
    GROUP BY auction, window_start, window_end
  ) AS CountBids
  GROUP BY CountBids.starttime, CountBids.endtime
) AS MaxBids
ON AuctionBids.starttime = MaxBids.starttime AND
   AuctionBids.endtime = MaxBids.endtime AND
   AuctionBids.num >= MaxBids.maxn;
