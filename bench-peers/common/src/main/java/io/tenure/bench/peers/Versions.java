package io.tenure.bench.peers;

import java.io.InputStream;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The version of a client library on the classpath: from the pom.properties Maven puts in its jar,
 * else from the jar's file name ({@code artifact-1.2.3.jar}), as some jars (jetcd) ship neither.
 */
public final class Versions {

    private Versions() {}

    public static String of(String groupId, String artifactId, Class<?> anchor) {
        String path = "/META-INF/maven/" + groupId + "/" + artifactId + "/pom.properties";
        try (InputStream in = Versions.class.getResourceAsStream(path)) {
            if (in != null) {
                Properties p = new Properties();
                p.load(in);
                String v = p.getProperty("version");
                if (v != null) {
                    return v;
                }
            }
            String jar = anchor.getProtectionDomain().getCodeSource().getLocation().getPath();
            Matcher m = Pattern.compile(Pattern.quote(artifactId) + "-([0-9][^/]*)\\.jar$").matcher(jar);
            return m.find() ? m.group(1) : "unknown";
        } catch (Exception e) {
            return "unknown";
        }
    }
}
