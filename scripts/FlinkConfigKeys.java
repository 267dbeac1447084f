import java.lang.reflect.*;
import java.util.*;
import java.util.jar.*;
import java.io.*;

/**
 * Prints every configuration key Flink declares (ConfigOption fields of its *Options classes in the jars given), one
 * per line: key, declaring class, and "hidden" (excluded from Flink's docs), "deprecated" or "old-name-of NEW".
 * scripts/flink-config-keys runs it over PyFlink's jars to write shell/flink_keys.py.
 */
public class FlinkConfigKeys {
  public static void main(String[] a) throws Exception {
    TreeMap<String,String> out = new TreeMap<>();
    ClassLoader cl = FlinkConfigKeys.class.getClassLoader();
    Class<?> opt = Class.forName("org.apache.flink.configuration.ConfigOption");
    Class<? extends java.lang.annotation.Annotation> excl = null;
    try { excl = (Class) Class.forName("org.apache.flink.annotation.docs.Documentation$ExcludeFromDocumentation"); } catch (Throwable t) {}
    for (String jar : a) {
      try (JarFile jf = new JarFile(jar)) {
        for (Enumeration<JarEntry> e = jf.entries(); e.hasMoreElements();) {
          String n = e.nextElement().getName();
          if (!n.endsWith("Options.class") || n.contains("$") || n.contains("shaded")) continue;
          String cn = n.replace('/', '.').substring(0, n.length() - 6);
          Class<?> c;
          try { c = Class.forName(cn, false, cl); } catch (Throwable t) { continue; }
          Field[] fs;
          try { fs = c.getDeclaredFields(); } catch (Throwable t) { continue; }
          for (Field f : fs) {
            if (!Modifier.isStatic(f.getModifiers()) || !opt.isAssignableFrom(f.getType())) continue;
            try {
              f.setAccessible(true);
              Object o = f.get(null);
              String key = (String) opt.getMethod("key").invoke(o);
              boolean hidden = excl != null && f.isAnnotationPresent(excl);
              boolean dep = f.isAnnotationPresent(Deprecated.class);
              String cls = cn.substring(cn.lastIndexOf('.')+1);
              out.put(key, cls + (hidden ? " hidden" : "") + (dep ? " deprecated" : ""));
              for (Object fb : (Iterable<?>) opt.getMethod("fallbackKeys").invoke(o)) {
                String old = (String) fb.getClass().getMethod("getKey").invoke(fb);
                if (!out.containsKey(old)) out.put(old, cls + " old-name-of " + key);
              }
            } catch (Throwable t) {}
          }
        }
      }
    }
    for (Map.Entry<String,String> x : out.entrySet()) System.out.println(x.getKey() + "\t" + x.getValue());
  }
}
