-- The online store of 002_stateful-streams-pulsar-flink.txt: orders enriched with the current user and item.
CREATE TABLE users (
id STRING,
name STRING,
email STRING,
PRIMARY KEY (id) NOT ENFORCED
) WITH (
'connector' = 'upsert-pulsar',
'topic' = 'persistent://public/default/users',
'key.format' = 'raw',
'value.format' = 'json',
'service-url' = 'pulsar://localhost:6650',
'admin-url' = 'http://localhost:8080'
);

CREATE TABLE items (
id STRING,
name STRING,
price DOUBLE,
PRIMARY KEY (id) NOT ENFORCED
) WITH (
'connector' = 'upsert-pulsar',
'topic' = 'persistent://public/default/items',
'key.format' = 'raw',
'value.format' = 'json',
'service-url' = 'pulsar://localhost:6650',
'admin-url' = 'http://localhost:8080'
);

CREATE TABLE orders (
id STRING,
userId STRING,
itemId STRING,
quantity INT,
PRIMARY KEY (id) NOT ENFORCED
) WITH (
'connector' = 'upsert-pulsar',
'topic' = 'persistent://public/default/orders',
'key.format' = 'raw',
'value.format' = 'json',
'service-url' = 'pulsar://localhost:6650',
'admin-url' = 'http://localhost:8080'
);

CREATE TABLE order_details (
orderId STRING,
userName STRING,
userEmail STRING,
itemName STRING,
price DOUBLE,
quantity INT,
PRIMARY KEY (orderId) NOT ENFORCED
) WITH (
'connector' = 'upsert-pulsar',
'topic' = 'persistent://public/default/order_details',
'key.format' = 'raw',
'value.format' = 'json',
'service-url' = 'pulsar://localhost:6650',
'admin-url' = 'http://localhost:8080'
);

INSERT INTO order_details
SELECT o.id, u.name, u.email, i.name, i.price, o.quantity
FROM orders o
JOIN users u ON o.userId = u.id
JOIN items i ON o.itemId = i.id;
