package io.github.distlock.autoconfigure;

import java.beans.PropertyDescriptor;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.boot.origin.Origin;
import org.springframework.core.env.Environment;

/**
 * Finds the {@code distributed-lock.*} properties of an environment that name no property of
 * {@link DistributedLockProperties}: a misspelled name would otherwise leave its default in
 * place without a word (say {@code distributed-lock.stor=redis}, which keeps the locks on etcd).
 * Each comes with the closest known name. The known names are {@link DistributedLockProperties}'s
 * own (the configuration metadata is generated from the same class), in the forms that binding
 * accepts ({@code lease-ttl}, {@code leaseTtl}, {@code lease_ttl}, {@code DISTRIBUTEDLOCK_ETCD_LEASETTL});
 * a group set to nothing (an empty YAML section) is known too. Not checked: environment variables
 * in the legacy form that keeps the dash as an underscore ({@code DISTRIBUTED_LOCK_STOR}), which
 * Spring Boot maps to {@code distributed.lock.*}.
 */
final class UnknownPropertyCheck {

    static final ConfigurationPropertyName PREFIX = ConfigurationPropertyName.of("distributed-lock");

    private UnknownPropertyCheck() {
    }

    /**
     * One unknown property.
     * @param name as the environment spells it
     * @param origin where it was set, e.g. {@code class path resource [application.yml] - 3:5}; null if unknown
     * @param closest the known property whose name is closest to it
     */
    record UnknownProperty(String name, @Nullable Origin origin, String closest) {

        /** @return the WARN that reports it */
        String message() {
            return "Unknown property '" + this.name + "'" + ((this.origin != null) ? " (" + this.origin + ")" : "")
                    + ": distlock ignores it; the closest known property is '" + this.closest + "'";
        }
    }

    /**
     * @param environment the application's environment
     * @return the unknown {@code distributed-lock.*} properties in it, each once, in name order
     */
    static List<UnknownProperty> find(Environment environment) {
        Set<ConfigurationPropertyName> known = new TreeSet<>();
        Set<ConfigurationPropertyName> maps = new TreeSet<>();
        collect(DistributedLockProperties.class, PREFIX, known, maps);
        Map<ConfigurationPropertyName, UnknownProperty> unknown = new LinkedHashMap<>();
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (!(source instanceof IterableConfigurationPropertySource iterable)) {
                continue;
            }
            iterable.stream().filter(PREFIX::isAncestorOf).forEach((name) -> {
                // A list or map property is bound from indexed names: endpoints[0], endpoints.0.
                ConfigurationPropertyName property = withoutIndexes(name);
                if (!isKnown(property, known, maps) && !unknown.containsKey(property)) {
                    ConfigurationProperty value = source.getConfigurationProperty(name);
                    unknown.put(property, new UnknownProperty(name.toString(),
                            (value != null) ? value.getOrigin() : null, closest(property, known)));
                }
            });
        }
        List<UnknownProperty> found = new ArrayList<>(unknown.values());
        found.sort(Comparator.comparing(UnknownProperty::name));
        return found;
    }

    /**
     * @return whether {@code property} binds: a known property, a group of known properties (an
     * empty YAML section sets one to ""), or an entry of a known map property
     */
    private static boolean isKnown(ConfigurationPropertyName property, Set<ConfigurationPropertyName> known,
            Set<ConfigurationPropertyName> maps) {
        if (known.contains(property)) {
            return true;
        }
        for (ConfigurationPropertyName name : known) {
            if (property.isAncestorOf(name) || (maps.contains(name) && name.isAncestorOf(property))) {
                return true;
            }
        }
        return false;
    }

    /** @return every property name that binds to {@link DistributedLockProperties}, with the prefix */
    static Set<ConfigurationPropertyName> knownProperties() {
        Set<ConfigurationPropertyName> known = new TreeSet<>();
        collect(DistributedLockProperties.class, PREFIX, known, new TreeSet<>());
        return known;
    }

    private static void collect(Class<?> type, ConfigurationPropertyName prefix, Set<ConfigurationPropertyName> known,
            Set<ConfigurationPropertyName> maps) {
        for (PropertyDescriptor descriptor : BeanUtils.getPropertyDescriptors(type)) {
            Class<?> propertyType = descriptor.getPropertyType();
            if (descriptor.getReadMethod() == null || propertyType == null || descriptor.getName().equals("class")) {
                continue;
            }
            // leaseTtl: lease-ttl, the canonical form the metadata and messages use.
            String dashed = descriptor.getName().replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
            ConfigurationPropertyName name = prefix.append(dashed);
            boolean nested = propertyType.getDeclaringClass() == DistributedLockProperties.class && !propertyType.isEnum();
            if (nested) {
                collect(propertyType, name, known, maps);
            }
            else if (descriptor.getWriteMethod() != null || Collection.class.isAssignableFrom(propertyType)
                    || Map.class.isAssignableFrom(propertyType)) {
                known.add(name);
                if (Map.class.isAssignableFrom(propertyType)) {
                    maps.add(name);
                }
            }
        }
    }

    private static ConfigurationPropertyName withoutIndexes(ConfigurationPropertyName name) {
        for (int i = PREFIX.getNumberOfElements(); i < name.getNumberOfElements(); i++) {
            boolean dottedIndex = name.getElement(i, Form.ORIGINAL).chars().allMatch(Character::isDigit);
            if (name.isNumericIndex(i) || dottedIndex || name.chop(i + 1).isLastElementIndexed()) {
                return name.chop(i);
            }
        }
        return name;
    }

    /** @return the known name with the fewest single-character edits from {@code name}, in their dashed form */
    static String closest(ConfigurationPropertyName name, Set<ConfigurationPropertyName> known) {
        String wanted = uniform(name);
        ConfigurationPropertyName best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (ConfigurationPropertyName candidate : known) {
            int distance = editDistance(wanted, uniform(candidate));
            if (distance < bestDistance) {
                best = candidate;
                bestDistance = distance;
            }
        }
        return String.valueOf(best);
    }

    /** @return {@code name} with dashes and case ignored, as binding compares names */
    private static String uniform(ConfigurationPropertyName name) {
        StringBuilder uniform = new StringBuilder();
        for (int i = 0; i < name.getNumberOfElements(); i++) {
            uniform.append((i > 0) ? "." : "").append(name.getElement(i, Form.UNIFORM));
        }
        return uniform.toString();
    }

    /** Levenshtein distance, in two rows. */
    static int editDistance(String from, String to) {
        int[] previous = new int[to.length() + 1];
        int[] current = new int[to.length() + 1];
        for (int j = 0; j <= to.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= from.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= to.length(); j++) {
                int substitution = previous[j - 1] + ((from.charAt(i - 1) == to.charAt(j - 1)) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[to.length()];
    }
}
