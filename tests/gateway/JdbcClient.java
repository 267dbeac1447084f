// A PostgreSQL JDBC client for tests/gateway/test_clients.py: each argument after the URL is one step, and each
// step prints one line, so the test reads what a JDBC tool would see.
//   show              SHOW TABLES: the table names
//   sql:<statement>   executes it: "ok <update count>" and the server's notices (JDBC warnings)
//   query:<select>    a PreparedStatement with no parameters: the rows, "col=value" joined by ", "
//   param:<select>    the same with one int parameter (42) in $1 / ?
//   error:<statement> its SQLState, position and message
//   stream:<select>   reads a live query with a fetch size in a transaction, closes it after 3 rows
//   idle:<url>        waits until the gateway's metrics at <url> show no Spark query running (at most 60 s)
//   meta              DatabaseMetaData.getTables and getColumns of every table
import java.sql.*;
import java.util.*;

public class JdbcClient {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.setProperty("user", System.getProperty("gateway.user", "jdbc"));
        if (System.getProperty("gateway.password") != null) props.setProperty("password", System.getProperty("gateway.password"));
        try (Connection conn = DriverManager.getConnection(args[0], props)) {
            for (int i = 1; i < args.length; i++) step(conn, args[i]);
        } catch (SQLException e) {
            System.out.println("connect-error " + e.getSQLState() + " " + e.getMessage().replace('\n', ' '));
        }
    }

    static void step(Connection conn, String step) throws Exception {
        String arg = step.contains(":") ? step.substring(step.indexOf(':') + 1) : "";
        if (step.equals("show")) {
            try (Statement s = conn.createStatement(); ResultSet rs = s.executeQuery("SHOW TABLES")) {
                List<String> names = new ArrayList<>();
                while (rs.next()) names.add(rs.getString(1));
                System.out.println("tables " + String.join(",", names));
            }
        } else if (step.startsWith("sql:")) {
            try (Statement s = conn.createStatement()) {
                s.execute(arg);
                StringBuilder notes = new StringBuilder();
                for (SQLWarning w = s.getWarnings(); w != null; w = w.getNextWarning()) notes.append(" | ").append(w.getMessage());
                System.out.println("ok " + s.getUpdateCount() + notes);
            }
        } else if (step.startsWith("query:") || step.startsWith("param:")) {
            try (PreparedStatement s = conn.prepareStatement(arg)) {
                if (step.startsWith("param:")) s.setInt(1, 42);
                try (ResultSet rs = s.executeQuery()) {
                    ResultSetMetaData md = rs.getMetaData();
                    while (rs.next()) {
                        List<String> cells = new ArrayList<>();
                        for (int c = 1; c <= md.getColumnCount(); c++) cells.add(md.getColumnName(c) + "=" + rs.getObject(c));
                        System.out.println("row " + String.join(", ", cells));
                    }
                }
            }
        } else if (step.startsWith("error:")) {
            try (Statement s = conn.createStatement()) {
                s.execute(arg);
                System.out.println("no-error");
            } catch (SQLException e) {
                String position = "";
                if (e instanceof org.postgresql.util.PSQLException) {
                    org.postgresql.util.ServerErrorMessage m = ((org.postgresql.util.PSQLException) e).getServerErrorMessage();
                    if (m != null) position = String.valueOf(m.getPosition());
                }
                System.out.println("error " + e.getSQLState() + " " + position + " " + e.getMessage().split("\n")[0]);
            }
        } else if (step.startsWith("stream:")) {
            conn.setAutoCommit(false);
            Statement s = conn.createStatement();
            s.setFetchSize(1);
            int rows = 0;
            try (ResultSet rs = s.executeQuery(arg)) {
                while (rs.next()) {
                    System.out.println("change " + rs.getString(1) + " " + rs.getString(2));
                    if (++rows == 3) break;  // JDBC stops a read by closing it (its cancel() only reaches executeQuery)
                }
                System.out.println("stream-closed");
            } catch (SQLException e) {
                System.out.println("stream-error " + e.getSQLState());
            }
            s.close();
            conn.rollback();
            conn.setAutoCommit(true);
        } else if (step.startsWith("idle:")) {
            java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
            for (int i = 0; i < 300; i++) {
                String body = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(arg)).build(),
                                        java.net.http.HttpResponse.BodyHandlers.ofString()).body();
                if (body.contains("streamshell_gateway_spark_queries 0")) { System.out.println("idle"); return; }
                Thread.sleep(200);
            }
            System.out.println("still-running");
        } else if (step.equals("meta")) {
            DatabaseMetaData md = conn.getMetaData();
            try (ResultSet rs = md.getTables(null, null, "%", new String[] {"TABLE", "VIEW"})) {
                while (rs.next()) System.out.println("meta-table " + rs.getString("TABLE_SCHEM") + "." + rs.getString("TABLE_NAME") + " " + rs.getString("TABLE_TYPE"));
            }
            try (ResultSet rs = md.getColumns(null, null, "%", "%")) {
                while (rs.next()) System.out.println("meta-column " + rs.getString("TABLE_NAME") + "." + rs.getString("COLUMN_NAME") + " " + rs.getString("TYPE_NAME"));
            }
        } else {
            throw new IllegalArgumentException("unknown step " + step);
        }
    }
}
